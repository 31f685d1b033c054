"""Shared compiler options for Sonde's own code.

Exports of libsonde.so are controlled by a linker version script
(engine/libsonde.lds), not by -fvisibility, so per-library test binaries
link normally.
"""
SONDE_COPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
SONDE_TEST_COPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
