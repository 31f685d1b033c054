#!/usr/bin/env bash
# The installed header, as checked in: its function declarations are what
# tools/mpi_h/gen_mpi_h.py writes from tools/mpi_h/functions.txt, every
# function is a plain declaration (no macro builds names), and it compiles as
# C and as C++. Every check runs even after a failure.
set -u

root="$TEST_SRCDIR/sonde"
header="$root/include/mpi.h"
tmp="$TEST_TMPDIR"
status=0
failed() { echo "FAIL: $*"; status=1; }

/usr/bin/python3 "$root/tools/mpi_h/gen_mpi_h.py" --check --header "$header" \
  --table "$root/tools/mpi_h/functions.txt" ||
  failed "include/mpi.h is not what tools/mpi_h/functions.txt gives: run python3 tools/mpi_h/gen_mpi_h.py"

/usr/bin/python3 "$root/tools/mpi_h/gen_qmpi.py" --check --root "$root" --table "$root/tools/mpi_h/functions.txt" ||
  failed "QMPI's generated files are not what tools/mpi_h/functions.txt gives: run python3 tools/mpi_h/gen_qmpi.py"

# Token pasting is how a macro would make up names that grep cannot find.
! grep -n '##' "$header" || failed "include/mpi.h pastes tokens (##): declare each function by its name"

# `grep 'int MPI_Send('` finds the whole prototype, and the profiling twin is declared the same way.
for name in MPI_Send PMPI_Send; do
  grep -qxF "SONDE_API int $name(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);" \
    "$header" || failed "no one-line declaration of $name"
done

mkdir -p "$tmp/inc"
cp "$header" "$root/include/peruse.h" "$root/include/qmpi.h" "$tmp/inc/"
printf '#include <mpi.h>\n#include <peruse.h>\nint main(void) { return MPI_Init(0, 0); }\n' >"$tmp/use.c"
gcc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$tmp/inc" -x c "$tmp/use.c" ||
  failed "mpi.h and peruse.h do not compile as C (-std=c99 -pedantic -Wall -Wextra -Werror)"
g++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$tmp/inc" -x c++ "$tmp/use.c" ||
  failed "mpi.h and peruse.h do not compile as C++ (-std=c++20 -Wall -Wextra -Werror)"

[[ $status -eq 0 ]] && echo "PASS: generated, plain declarations, C and C++"
exit $status
