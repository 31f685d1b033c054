"""Compiler flags for the Appendix B programs, shared with their tests.

-Wall, and every warning an error except those the specification's own code
draws: its unused variables (b2, b3, b4, b5) and, in 9.2, an index the
compiler cannot prove set (MPI_Comm_free's comm_idx).
"""

APPB_COPTS = [
    "-std=c11",
    "-Wall",
    "-Werror",
]

# The printed code's unused variables.
APPB_SPEC_COPTS = APPB_COPTS + ["-Wno-unused-variable"]

B5_COPTS = APPB_SPEC_COPTS + ["-Wno-maybe-uninitialized"]

# Sonde has no MPI_Comm_create yet (issue 3): leave that one wrapper out.
B5_DEFINES = ["APPB_NO_MPI_COMM_CREATE"]
