# 9.1.1 (b1_queries), every rank. The test runs it with exactly two of the
# library's variables set: SONDE_EAGER_LIMIT=4096 and SONDE_SHM_SINGLE_COPY=1.
BEGIN {
  # Sonde's supported events with their descriptors, as peruse.h defines
  # them: the sixteen of the specification and PERUSE_COMM_REQ_XFER_CONTINUE.
  n = split("REQ_ACTIVATE REQ_MATCH_UNEX REQ_INSERT_IN_POSTED_Q REQ_REMOVE_FROM_POSTED_Q " \
            "REQ_XFER_BEGIN REQ_XFER_END REQ_COMPLETE REQ_NOTIFY MSG_ARRIVED " \
            "MSG_INSERT_IN_UNEX_Q MSG_REMOVE_FROM_UNEX_Q MSG_MATCH_POSTED_REQ " \
            "SEARCH_POSTED_Q_BEGIN SEARCH_POSTED_Q_END SEARCH_UNEX_Q_BEGIN " \
            "SEARCH_UNEX_Q_END REQ_XFER_CONTINUE", short, " ")
  for (i = 1; i <= n; i++) want_id["PERUSE_COMM_" short[i]] = i
  want_supported = n
  # The program's own table: the first twelve, in order.
  want_queried = 12
  want_env["SONDE_EAGER_LIMIT=4096"] = 1
  want_env["SONDE_SHM_SINGLE_COPY=1"] = 1
  want_env_n = 2
  section = ""
}
{ lines++ }
section == "env" && left > 0 { env_seen[$0]++; left--; next }
section == "events" && left > 0 {
  eq = index($0, "=")
  name = substr($0, 1, eq - 1)
  got_id[name] = substr($0, eq + 1)
  got_n[name]++
  left--
  next
}
/^Number of env\. variables: / { env_n = $NF; section = "env"; left = env_n; next }
/^Number of supported events: / { sup_n = $NF; section = "events"; left = sup_n; next }
/^SCOPE=/ { scope = substr($0, 7); section = ""; next }
/^event=/ {
  # event=NAME, event ID=N is supported
  q++
  split($0, part, /, event ID=| is /)
  q_name[q] = substr(part[1], 7)
  q_id[q] = part[2]
  q_state[q] = part[3]
  next
}
{ other++ }
END {
  expect("number of environment variables", env_n, want_env_n)
  for (e in want_env) expect("times " e " is listed", env_seen[e], 1)
  expect("number of supported events", sup_n, want_supported)
  for (name in want_id) {
    expect("times " name " is listed as supported", got_n[name], 1)
    expect("descriptor of " name, got_id[name], want_id[name])
  }
  expect_str("queue event scope", scope, "PER_COMM")
  expect("number of events queried", q, want_queried)
  for (i = 1; i <= q; i++) {
    expect_str("queried event " i, q_name[i], "PERUSE_COMM_" short[i])
    expect("its descriptor", q_id[i], want_id[q_name[i]])
    expect_str("its state", q_state[i], "supported")
  }
  expect("lines not understood", other + 0, 0)
  expect("lines printed", lines, 1 + want_env_n + 1 + want_supported + 1 + want_queried)
  finish()
}
