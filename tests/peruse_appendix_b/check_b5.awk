# 9.2 (b5_profiler) linked into b5_workload.c, 2 ranks, with observer.c. The
# profiler counts every event on MPI_COMM_WORLD and the duplicate, user and
# internal traffic alike, except events whose peer is the rank itself; the
# observer counts the same window, so each metric's number of measurements
# must be exactly the observer's count of the event behind it.
BEGIN {
  # rank 0 / rank 1 user requests (b5_workload.c): sends + receives
  requests[0] = 10 + 15; requests[1] = 15 + 10
  arrived[0] = 15; arrived[1] = 10  # messages received, self message included
  # metric -> the event whose occurrences it measures
  source["T_REQ_ACTIVATE_TO_MATCH"] = "REQ_MATCH_UNEX"
  source["T_REQ_ACTIVATE_TO_XFER_BEGIN"] = "REQ_XFER_BEGIN"
  source["T_XFER_BEGIN_TO_END"] = "REQ_XFER_END"
  source["T_COMPLETE_TO_NOTIFY"] = "REQ_NOTIFY"
  source["T_ACTIVATE_TO_NOTIFY"] = "REQ_NOTIFY"
  source["T_IN_UNEX_Q"] = "MSG_REMOVE_FROM_UNEX_Q"
  source["N_POSTED_Q_LEN"] = "REQ_INSERT_IN_POSTED_Q"
  source["N_UNEX_Q_LEN"] = "MSG_INSERT_IN_UNEX_Q"
  n_metrics = 8
}
/^b5 workload: done$/ { done++; next }
/^metric: / { metric = $2; metrics++; seen[metric]++; next }
/^ +number of measurements: / { num[metric] = $NF; next }
/^ +average +: / { ave[metric] = $NF; next }
/^ +maximum +: / { max[metric] = $NF; next }
{ other++ }
function nonself(event) { return obs_window(event) - obs(event, "window_self") }
END {
  need_observer()
  expect("'b5 workload: done' lines", done, 1)
  expect("lines not understood (e.g. 'Event ... not supported')", other + 0, 0)
  expect("metrics reported", metrics, n_metrics)
  # The observer saw the workload's traffic.
  expect("user requests started", obs("REQ_ACTIVATE", "user"), requests[rank])
  expect("user requests notified", obs("REQ_NOTIFY", "user"), requests[rank])
  expect("user messages arrived", obs("MSG_ARRIVED", "user"), arrived[rank])
  expect("user messages matched: unexpected + posted",
         obs("MSG_REMOVE_FROM_UNEX_Q", "user") + obs("MSG_MATCH_POSTED_REQ", "user"), arrived[rank])
  # Every message taken out of the unexpected queue was put in it first, as
  # the observer (propagated to the duplicate) saw it: also the messages
  # that reached rank 1 on the duplicate before its MPI_Comm_dup returned.
  expect("user messages inserted in the unexpected queue (= removed from it)",
         obs("MSG_INSERT_IN_UNEX_Q", "user"), obs("MSG_REMOVE_FROM_UNEX_Q", "user"))
  # The profiler's callback ran for every event in its window (which opens
  # on the duplicate only once PMPI_Comm_dup returned: rank 0's messages on
  # it may have arrived at rank 1 before).
  split("REQ_ACTIVATE REQ_MATCH_UNEX REQ_INSERT_IN_POSTED_Q REQ_REMOVE_FROM_POSTED_Q REQ_XFER_BEGIN " \
        "REQ_XFER_END REQ_COMPLETE REQ_NOTIFY MSG_ARRIVED MSG_INSERT_IN_UNEX_Q MSG_REMOVE_FROM_UNEX_Q " \
        "MSG_MATCH_POSTED_REQ", ev, " ")
  for (i = 1; i <= 12; i++) {
    expect("times the profiler's callback ran for " ev[i], obs(ev[i], "program"), obs_window(ev[i]))
  }
  expect("times the profiler's callback ran for other events", obs("REQ_XFER_CONTINUE", "program") + \
         obs("SEARCH_POSTED_Q_BEGIN", "program") + obs("SEARCH_UNEX_Q_BEGIN", "program"), 0)
  # The profiler's report.
  for (m in source) {
    expect("metric " m " reported", seen[m], 1)
    expect(m ": number of measurements", num[m], nonself(source[m]))
    if (m ~ /^T_/) {
      if (num[m] + 0 == 0) {
        expect(m ": average of nothing", ave[m], 0)
        expect(m ": maximum of nothing", max[m], 0)
      } else {
        expect_true(m ": 0 <= average (" ave[m] ") <= maximum (" max[m] ")",
                    ave[m] >= 0 && ave[m] <= max[m])
      }
    } else {
      # As printed, ComputeCounterMetric() averages without the new sample.
      expect(m ": average", ave[m], 0)
    }
  }
  # Rank 0's posted queue peaks at part B's 8 receives.
  if (rank == 0) expect("N_POSTED_Q_LEN: maximum", max["N_POSTED_Q_LEN"], 8)
  finish()
}
