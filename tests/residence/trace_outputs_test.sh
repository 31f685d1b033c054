#!/bin/bash
# The queue-residence profiler's traces and report, end to end: runs a job
# under `mpiexec --profile` (which finds the profiler next to itself) and
# checks what it wrote with check_outputs.py.
#
#   trace_outputs_test.sh MODE MPIEXEC TRAFFIC HALO CHECKER
#   MODE: queues | otf2 | report | fidelity | overflow (check_outputs.py)
# Chromium renders the report headless (report, fidelity); its DOM is what is
# checked, and a screenshot is left in $TEST_UNDECLARED_OUTPUTS_DIR.
set -euo pipefail
mode=$1 mpiexec=$2 traffic=$3 halo=$4 checker=$5
tmp=${TEST_TMPDIR:-$(mktemp -d)}
out="$tmp/profile"
rm -rf "$out"
shots=${TEST_UNDECLARED_OUTPUTS_DIR:-$tmp}

render() {  # report.html -> $tmp/dom.html (and a screenshot)
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
               --disable-component-update --disable-sync --user-data-dir="$tmp/chromium")
  HOME="$tmp" timeout 120 chromium "${flags[@]}" --dump-dom "file://$out/report.html" > "$tmp/dom.html" 2> "$tmp/chromium.log" ||
    { cat "$tmp/chromium.log"; echo "FAIL: chromium could not render the report"; exit 1; }
  HOME="$tmp" timeout 120 chromium "${flags[@]}" --window-size=1000,2200 --screenshot="$shots/report-$mode.png" \
    "file://$out/report.html" >> "$tmp/chromium.log" 2>&1 || true
}

case $mode in
  queues | otf2)
    "$mpiexec" --timeout 120 --profile "$out" --profile-trace perfetto,otf2 -n 2 "$traffic" "$out" --queues
    if [[ $mode == queues ]]; then
      python3 "$checker" queues "$out"
    else
      otf2-print -Werror "$out/otf2/traces.otf2" > "$tmp/otf2.txt" || { echo "FAIL: otf2-print -Werror rejects the archive"; exit 1; }
      python3 "$checker" otf2 "$out" "$tmp/otf2.txt"
    fi
    ;;
  report)
    "$mpiexec" --timeout 120 --profile "$out" -n 4 "$halo" -n 32
    render
    python3 "$checker" report "$out" "$tmp/dom.html"
    ;;
  fidelity)
    "$mpiexec" --timeout 120 --profile "$out" --profile-trace perfetto -n 2 "$traffic" "$out" --fidelity
    render
    python3 "$checker" fidelity "$out" "$tmp/dom.html"
    ;;
  overflow)
    "$mpiexec" --timeout 120 --profile "$out" --profile-trace perfetto -genv SONDE_RESIDENCE_EVENTS 16 -n 2 \
      "$traffic" "$out" --queues
    python3 "$checker" overflow "$out"
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
