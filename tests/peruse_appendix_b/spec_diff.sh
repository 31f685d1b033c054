#!/bin/bash
# Shows every change made to the Appendix B listings of the PERUSE 2.0
# specification other than white space and underscores, for review:
#
#   tests/peruse_appendix_b/spec_diff.sh [SPEC] [b1|b2|b3|b4|b5 ...]
#
# SPEC defaults to ../shared/spec/peruse-2.0.txt (beside the repository).
# Both the specification's listing and the program in
# examples/peruse_appendix_b/ are reduced to their non-empty lines with all
# blanks and underscores removed (so `MPI Init` and `MPI_Init` read alike),
# without the program's header comment, the listing's page numbers and its
# Markdown fences; then diffed. What remains is exactly the repairs each
# program's header comment lists. (Not a Bazel test: the specification is not
# part of the repository.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
spec=${1:-$root/../shared/spec/peruse-2.0.txt}
shift || true
progs=("$@")
[[ ${#progs[@]} -gt 0 ]] || progs=(b1 b2 b3 b4 b5)

# The listing of section $1 runs from its heading to the next heading $2.
listing() {
  awk -v from="$1" -v to="$2" 'index($0, from) == 1 && NR > 300 { on = 1; next }
                               index($0, to) == 1 && NR > 300 { on = 0 } on' "$spec"
}
normalize() {
  tr -d ' \t_' | grep -v -e '^$' -e '^```$' -e '^[0-9][0-9]*$' || true
}
# A program without its header comment (up to the first #include).
program() { awk '/^#include/ { on = 1 } on' "$1"; }

for p in "${progs[@]}"; do
  case "$p" in
    b1) from="9.1.1 Using"; to="9.1.2 Using"; file=b1_queries.c ;;
    b2) from="9.1.2 Using"; to="9.1.3 Using"; file=b2_callbacks.c ;;
    b3) from="9.1.3 Using"; to="9.1.4 Counting"; file=b3_queue_events.c ;;
    b4) from="9.1.4 Counting"; to="9.2 Example"; file=b4_counting.c ;;
    b5) from="9.2 Example"; to="10. Appendix C"; file=b5_profiler.c ;;
    *) echo "unknown program $p" >&2; exit 2 ;;
  esac
  echo "=== $p: $file against the specification's section '$from'"
  diff <(listing "$from" "$to" | normalize) \
       <(program "$root/examples/peruse_appendix_b/$file" | normalize) || true
done
