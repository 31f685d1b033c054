# 9.1.2 (b2_callbacks), 2 ranks, linked with observer.c. Rank 1 sends
# NUM_MSG messages of tag 0 to rank 0 and receives one zero-byte message;
# rank 0 watches its unexpected queue on MPI_COMM_WORLD while it receives
# them. Which messages arrive before their receive is posted is up to the
# library and timing (on Sonde none: MPI_Irecv does not drive progress, so
# all receives are posted before rank 0 handles any arrival); the observer
# says which did, and the program's numbers must agree exactly. Unexpected
# messages of Sonde's internal traffic (rank 1 reaches MPI_Finalize's
# barrier before rank 0 closes its window) count too: the program does not
# filter tags.
BEGIN { NUM_MSG = 100 }
/^Callback called for event / { callback[$NF]++; lines++; next }
/^Number of measurements: / { measurements = $NF; lines++; next }
/^Average time in unexpected queue: / { average = $(NF - 1); lines++; next }
/^maximum time in unexpected queue: / { maximum = $(NF - 1); lines++; next }
{ other++ }
END {
  need_observer()
  expect("lines the program printed that are not its report", other + 0, 0)
  if (rank == 0) {
    # Every message rank 1 sent arrived, and was either unexpected (and then
    # removed from the unexpected queue by one of the receives) or matched a
    # posted receive.
    expect("user messages that arrived", obs("MSG_ARRIVED", "user"), NUM_MSG)
    expect("user messages unexpected + matched to a posted receive",
           obs("MSG_REMOVE_FROM_UNEX_Q", "user") + obs("MSG_MATCH_POSTED_REQ", "user"), NUM_MSG)
    expect("user messages inserted in the unexpected queue = removed",
           obs("MSG_INSERT_IN_UNEX_Q", "user"), obs("MSG_REMOVE_FROM_UNEX_Q", "user"))
    # All NUM_MSG receives are posted inside the window, so every removal of
    # a user message happened inside it.
    expect("user removals inside the window", obs("MSG_REMOVE_FROM_UNEX_Q", "window_user"),
           obs("MSG_REMOVE_FROM_UNEX_Q", "user"))
    # The messages rank 1 sends after rank 0's zero-byte message (all its
    # receives are posted by then) cannot be unexpected.
    expect_true("at least NUM_MSG - NUM_MSG/2 - 1 user messages matched a posted receive",
                obs("MSG_MATCH_POSTED_REQ", "user") >= NUM_MSG - NUM_MSG / 2 - 1)
    # The program's report.
    expect("Number of measurements", measurements, obs_window("MSG_REMOVE_FROM_UNEX_Q"))
    expect("callback lines for the removal", callback["PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q"] + 0,
           obs_window("MSG_REMOVE_FROM_UNEX_Q"))
    expect("callback lines for the insertion", callback["PERUSE_COMM_MSG_INSERT_IN_UNEX_Q"] + 0,
           obs_window("MSG_INSERT_IN_UNEX_Q"))
    expect("callback lines in all", lines - 3, obs_window("MSG_REMOVE_FROM_UNEX_Q") + obs_window("MSG_INSERT_IN_UNEX_Q"))
    expect("times the program's callback ran for the removal", obs("MSG_REMOVE_FROM_UNEX_Q", "program"),
           obs_window("MSG_REMOVE_FROM_UNEX_Q"))
    expect("times the program's callback ran for the insertion", obs("MSG_INSERT_IN_UNEX_Q", "program"),
           obs_window("MSG_INSERT_IN_UNEX_Q"))
    if (measurements + 0 == 0) {
      expect_true("average with no measurement is nan (0/0), not " average, average ~ /nan/)
      expect("maximum with no measurement", maximum, 0)
    } else {
      expect_true("average time is a number >= 0", average ~ /^[0-9.]+$/)
      expect_true("maximum time >= average", maximum + 0 >= average + 0)
    }
  } else {
    # Rank 1 registers nothing and prints nothing; it received one message.
    expect("lines the program printed", lines + 0, 0)
    expect("user messages that arrived", obs("MSG_ARRIVED", "user"), 1)
    expect("user requests started", obs("REQ_ACTIVATE", "user"), NUM_MSG + 1)
    for (k in OBS) {
      split(k, key, SUBSEP)
      if (key[2] == "program") expect("program callbacks for " key[1], OBS[k], 0)
    }
  }
  finish()
}
