# 9.1.4 (b4_counting), linked with observer.c. With traffic=1 (rank_check.sh
# --set traffic=1) its UserMpiProcessing() is b4_traffic.c, whose formulas
# these are; otherwise it is the specification's empty stub and every count
# is 0.
#
# Sonde's own MPI_Finalize traffic from a peer that finished first may reach
# this rank's unexpected queue inside the window: the program counts it (it
# does not filter tags) and so does the expectation, from the observer. Only
# the running average of the unexpected queue length then depends on where
# it fell; that one is checked exactly only for peers with none.
function unexpected_count(s, r) { return 1 + s + 2 * r }
function posted_count(s, r) { return 2 + 2 * s + r }
# The program's integer running average of the lengths len[1..n].
function running_average(len, n,    i, ave) {
  ave = 0
  for (i = 1; i <= n; i++) ave = int(((i - 1) * ave + len[i]) / i)
  return ave
}
/^===== Peer rank: [0-9]+ =====$/ { peer = $4; blocks++; order[blocks] = peer; next }
/^number of unexpected messages: / { got[peer, "unex_num"] = $NF; next }
/^max unexpected queue length: / { got[peer, "unex_max"] = $NF; next }
/^ave unexpected queue length: / { got[peer, "unex_ave"] = $NF; next }
/^number of posted receives *: / { got[peer, "posted_num"] = $NF; next }
/^max posted queue length: / { got[peer, "posted_max"] = $NF; next }
/^ave posted queue length: / { got[peer, "posted_ave"] = $NF; next }
{ other++ }
END {
  need_observer()
  expect("lines the program printed that are not its report", other + 0, 0)
  expect("peer blocks in the report", blocks, size)
  for (i = 1; i <= blocks; i++) expect("peer of block " i, order[i], i - 1)
  unex_total = 0
  posted_total = 0
  for (p = 0; p < size; p++) {
    internal = obs_peer("MSG_INSERT_IN_UNEX_Q", p, "window_internal")
    if (!traffic || p == rank) {
      U = 0; P = 0; extra = 0
    } else {
      U = unexpected_count(p, rank); P = posted_count(p, rank); extra = 3
    }
    unex_n = U ? U + extra : 0
    # The traffic's own messages, user tags only.
    expect("peer " p ": user messages inserted in the unexpected queue (observer)",
           obs_peer("MSG_INSERT_IN_UNEX_Q", p, "window_user"), unex_n)
    expect("peer " p ": receives inserted in the posted queue (observer)",
           obs_peer_window("REQ_INSERT_IN_POSTED_Q", p), P)
    # The program's report.
    expect("peer " p ": number of unexpected messages", got[p, "unex_num"], unex_n + internal)
    if (U || !internal)
      expect("peer " p ": max unexpected queue length", got[p, "unex_max"], U ? U + 1 : 0)
    else
      expect_true("peer " p ": max unexpected queue length within [1, " internal "]",
                  got[p, "unex_max"] >= 1 && got[p, "unex_max"] <= internal)
    expect("peer " p ": number of posted receives", got[p, "posted_num"], P)
    expect("peer " p ": max posted queue length", got[p, "posted_max"], P)
    delete len
    for (k = 1; k <= P; k++) len[k] = k
    expect("peer " p ": ave posted queue length", got[p, "posted_ave"], running_average(len, P))
    if (internal == 0) {
      delete len
      n = 0
      for (k = 1; k <= (U ? U + 1 : 0); k++) len[++n] = k
      for (k = 1; k <= (U ? 2 : 0); k++) len[++n] = 1  # ready, done
      expect("peer " p ": ave unexpected queue length", got[p, "unex_ave"], running_average(len, n))
    } else {
      expect_true("peer " p ": ave unexpected queue length within [1, max]",
                  got[p, "unex_ave"] >= 1 && got[p, "unex_ave"] <= got[p, "unex_max"])
    }
    unex_total += got[p, "unex_num"]
    posted_total += got[p, "posted_num"]
  }
  # The program's callback ran exactly for the events in its window.
  split("REQ_INSERT_IN_POSTED_Q REQ_REMOVE_FROM_POSTED_Q MSG_INSERT_IN_UNEX_Q MSG_REMOVE_FROM_UNEX_Q", q, " ")
  for (i = 1; i <= 4; i++)
    expect("times the program's callback ran for " q[i], obs(q[i], "program"), obs_window(q[i]))
  expect("unexpected messages, all peers", unex_total, obs_window("MSG_INSERT_IN_UNEX_Q"))
  expect("posted receives, all peers", posted_total, obs_window("REQ_INSERT_IN_POSTED_Q"))
  expect("posted receives removed = inserted", obs_window("REQ_REMOVE_FROM_POSTED_Q"), posted_total)
  finish()
}
