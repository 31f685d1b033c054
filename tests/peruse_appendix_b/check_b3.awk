# 9.1.3 (b3_queue_events), 2 ranks, linked with observer.c. Rank 0 posts
# NUM_MSG receives of tag 0 from rank 1 with the four search events active;
# rank 1 sends NUM_MSG messages. The program computes nothing (its callback
# bodies are comments in the specification) and prints nothing: its result
# is that its callback ran for exactly the searches inside its window, and
# never for anything else (it would return MPI_ERR_INTERN and end the job).
BEGIN { NUM_MSG = 100 }
{ other++ }
END {
  need_observer()
  expect("lines the program printed", other + 0, 0)
  split("SEARCH_POSTED_Q_BEGIN SEARCH_POSTED_Q_END SEARCH_UNEX_Q_BEGIN SEARCH_UNEX_Q_END", q, " ")
  for (k in OBS) {
    split(k, key, SUBSEP)
    if (key[2] != "program" || key[1] ~ /^SEARCH_/) continue
    expect("program callbacks for " key[1], OBS[k], 0)
  }
  if (rank == 0) {
    # Each receive searches the unexpected queue once, inside the window;
    # each message searches the posted queue once when it arrives, inside the
    # window or (if rank 1 got ahead) before it.
    expect("user searches of the unexpected queue (begin)", obs("SEARCH_UNEX_Q_BEGIN", "user"), NUM_MSG)
    expect("user searches of the unexpected queue (end)", obs("SEARCH_UNEX_Q_END", "user"), NUM_MSG)
    expect("... inside the window", obs("SEARCH_UNEX_Q_BEGIN", "window_user"), NUM_MSG)
    expect("user searches of the posted queue (begin)", obs("SEARCH_POSTED_Q_BEGIN", "user"), NUM_MSG)
    expect("user searches of the posted queue (end)", obs("SEARCH_POSTED_Q_END", "user"), NUM_MSG)
    for (i = 1; i <= 4; i++)
      expect("times the program's callback ran for " q[i], obs(q[i], "program"), obs_window(q[i]))
    expect("program's posted-queue searches: begins = ends", obs("SEARCH_POSTED_Q_BEGIN", "program"),
           obs("SEARCH_POSTED_Q_END", "program"))
    expect("program's unexpected-queue searches", obs("SEARCH_UNEX_Q_BEGIN", "program"), NUM_MSG)
    expect("program's unexpected-queue searches (end)", obs("SEARCH_UNEX_Q_END", "program"), NUM_MSG)
  } else {
    # Rank 1 registers the events but never activates them.
    for (i = 1; i <= 4; i++) expect("program callbacks for " q[i], obs(q[i], "program"), 0)
    expect("user searches of the unexpected queue", obs("SEARCH_UNEX_Q_BEGIN", "user"), 1)
    expect("user searches of the posted queue", obs("SEARCH_POSTED_Q_BEGIN", "user"), 1)
  }
  finish()
}
