# Helpers for the check_*.awk programs, which rank_check.sh runs as
#   awk -v rank=R -v size=N -f lib.awk -f check_X.awk OUTPUT
# This file first: it takes the observer's lines (observer.c) into OBS before
# the check's own rules see the program's lines; the check's END block ends
# with finish(), which reports and sets the exit status. obs("MSG_ARRIVED", "user") is the count for
# PERUSE_COMM_MSG_ARRIVED, obs_peer(event, peer, field) the per-peer one.

/^appb-observer / {
  read_observer_line()
  next
}

# Function parameters are awk's only local variables: these keep the
# parsing's names out of the checks' way.
function read_observer_line(    i, eq, kv, k, event) {
  observed = 1
  for (i = 2; i <= NF; i++) {
    eq = index($i, "=")
    kv[substr($i, 1, eq - 1)] = substr($i, eq + 1)
  }
  event = kv["event"]
  sub(/^PERUSE_COMM_/, "", event)
  for (k in kv) {
    if (k == "rank" || k == "event" || k == "peer") continue
    if ("peer" in kv)
      OBS_PEER[event, kv["peer"], k] = kv[k]
    else
      OBS[event, k] = kv[k]
  }
}

function obs(event, field) { return ((event, field) in OBS) ? OBS[event, field] + 0 : 0 }
function obs_peer(event, peer, field) {
  return ((event, peer, field) in OBS_PEER) ? OBS_PEER[event, peer, field] + 0 : 0
}
# Window count of an event, user and internal traffic together.
function obs_window(event) { return obs(event, "window_user") + obs(event, "window_internal") }
function obs_peer_window(event, peer) {
  return obs_peer(event, peer, "window_user") + obs_peer(event, peer, "window_internal")
}

function fail(what) {
  printf "FAIL: %s\n", what
  failures++
}
# Numbers compare as numbers: "7" and "7.0" agree, "" is not 0.
function expect(what, got, want) {
  if (got == "" || got + 0 != want + 0)
    fail(sprintf("%s is %s, expected %s", what, got == "" ? "missing" : got, want))
  else
    passed++
}
function expect_str(what, got, want) {
  if (got != want)
    fail(sprintf("%s is '%s', expected '%s'", what, got, want))
  else
    passed++
}
function expect_true(what, cond) {
  if (!cond)
    fail(what)
  else
    passed++
}
function need_observer() {
  expect_true("the observer reported its counts (appb-observer lines)", observed)
}

function finish() {
  if (failures) {
    printf "%d check(s) failed, %d passed\n", failures, passed
    exit 1
  }
  printf "all %d checks passed\n", passed
  exit 0
}
