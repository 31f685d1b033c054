"""Shared compiler options for Sonde's own code."""
SONDE_COPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-fvisibility=hidden"]
SONDE_TEST_COPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
