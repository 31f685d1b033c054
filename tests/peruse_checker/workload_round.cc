// One round of the workload (workload.h): receives posted before anyone
// sends, sends of every kind, MPI_PROC_NULL and self traffic, cancels, late
// receives with probes, completion, and the per-sender order of wildcard groups.
#include <algorithm>
#include <cstring>

#include "tests/peruse_checker/workload.h"

namespace workload {

int Round::new_record(const Msg& m) {
  RecvRecord rec;
  rec.msg = m.idx;
  rec.buf.assign(size_t(std::max(groups[m.group].max_size, 1)), 0);
  rec.post_seq = post_seq++;
  records.push_back(std::move(rec));
  return int(records.size()) - 1;
}

void Round::verify_record(RecvRecord& rec) {
  const Msg& own = plan[size_t(rec.msg)];
  const MPI_Status& st = rec.status;
  int idx = st.MPI_TAG - kTagBase - 1000 * (round % 7);
  if (idx < 0 || idx >= int(plan.size())) {
    CHECK(false, "receive for msg %d (%s, group %d) got tag %d: no such message", own.idx, kRecvNames[own.recv_kind],
          own.group, st.MPI_TAG);
    return;
  }
  const Msg& m = plan[size_t(idx)];
  CHECK(m.group == own.group && m.dst_w == g_rank,
        "receive for msg %d (group %d) got msg %d of group %d (to world rank %d)", own.idx, own.group, m.idx, m.group,
        m.dst_w);
  CHECK(received[size_t(idx)]++ == 0, "msg %d received twice", idx);
  expect_arrival(comm_of(m), m.src, m.tag);
  CHECK(st.MPI_SOURCE == m.src, "msg %d: status source %d, sent by %d", idx, st.MPI_SOURCE, m.src);
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  CHECK(count == m.size, "msg %d: %d bytes received, %d sent", idx, count, m.size);
  if (count == m.size) {
    uint64_t got = checksum(rec.buf.data(), size_t(m.size)),
             want = expected_checksum(size_t(m.size), msg_key(round, idx));
    CHECK(got == want, "msg %d (%d B, %s -> %s, comm %s): checksum %016llx, expected %016llx", idx, m.size,
          kSendNames[m.send_kind], kRecvNames[own.recv_kind], kSlotNames[m.slot], (unsigned long long)got,
          (unsigned long long)want);
  }
  ++stats.messages;
  stats.bytes += m.size;
}

void Round::post_preposted() {
  for (const Msg& m : plan) {
    if (m.dst_w != g_rank || !m.preposted) continue;
    int r = new_record(m);
    RecvRecord& rec = records[size_t(r)];
    MPI_Request req;
    int cap = int(rec.buf.size());
    ++stats.recvs[m.recv_kind];
    if (m.recv_kind == kRecvInit) {
      MPI_OK(MPI_Recv_init(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, comm_of(m), &req));
      MPI_OK(MPI_Start(&req));
      pending.push_back({req, r, true});
    } else {
      MPI_OK(MPI_Irecv(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, comm_of(m), &req));
      if (m.recv_kind == kIrecvCancel) cancel_prone.push_back({req, r, false});
      else pending.push_back({req, r, false});
    }
  }
}

void Round::post_never(MPI_Request persistent_never) {
  // All ranks draw the same numbers; each acts on its own.
  for (int w = 0; w < g_size; ++w) {
    bool post = g.chance(40);
    int slot = g.below(kNumSlots);
    int pick = g.below(1 << 20);
    if (w != g_rank || !post) continue;
    if (!g_comms[slot].member(g_rank)) slot = kWorld;
    const CommInfo& c = g_comms[slot];
    int n = int(c.peers_of(g_rank).size());
    int src = pick % 3 == 0 ? MPI_ANY_SOURCE : pick % n;
    scratch.emplace_back(16);
    MPI_Request req;
    MPI_OK(MPI_Irecv(scratch.back().data(), 16, MPI_BYTE, src, kTagNever, c.comm, &req));
    never.push_back(req);
  }
  if (g.chance(30)) {
    MPI_Request p = persistent_never;
    MPI_OK(MPI_Start(&p));
    persistent_started = true;
  }
}

void Round::send_all() {
  for (const Msg& m : plan) {
    if (m.src_w != g_rank) continue;
    send_bufs.emplace_back();
    std::vector<uint8_t>& b = send_bufs.back();
    fill(b, size_t(m.size), msg_key(round, m.idx));
    MPI_Comm c = comm_of(m);
    MPI_Request req = MPI_REQUEST_NULL;
    ++stats.sends[m.send_kind];
    // MPI_Ibsend and a started MPI_Bsend_init: the user's request and the internal one.
    bool two = m.send_kind == kIbsend || m.send_kind == kIbsendFree || m.send_kind == kBsendInit;
    expect_send(c, m.dst, m.tag, two ? 2 : 1);
    switch (m.send_kind) {
      case kSend: MPI_OK(MPI_Send(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
      case kSsend: MPI_OK(MPI_Ssend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
      case kRsend: MPI_OK(MPI_Rsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
      case kBsend: MPI_OK(MPI_Bsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
      case kIsend: MPI_OK(MPI_Isend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      case kIssend: MPI_OK(MPI_Issend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      case kIrsend: MPI_OK(MPI_Irsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      case kIbsend: MPI_OK(MPI_Ibsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      case kIsendFree:
        MPI_OK(MPI_Isend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req));
        MPI_OK(MPI_Request_free(&req));
        break;
      case kIbsendFree:
        MPI_OK(MPI_Ibsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req));
        MPI_OK(MPI_Request_free(&req));
        break;
      case kSendInit: MPI_OK(MPI_Send_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      case kSsendInit: MPI_OK(MPI_Ssend_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      case kRsendInit: MPI_OK(MPI_Rsend_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      case kBsendInit: MPI_OK(MPI_Bsend_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
    }
    bool persistent = m.send_kind >= kSendInit;
    if (persistent) MPI_OK(MPI_Start(&req));
    if (req != MPI_REQUEST_NULL) pending.push_back({req, -1, persistent});
  }
}

void Round::proc_null(bool sending) {
  int what = g.below(8);
  int act = g.below(g_size);
  bool also = g.chance(50);  // drawn by every rank: the sequence stays the same everywhere
  if (act != g_rank && !also) return;
  char b[8] = {};
  MPI_Status st;
  MPI_Request req;
  if (sending) {
    switch (what % 4) {
      case 0: MPI_OK(MPI_Send(b, 8, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD)); break;
      case 1:
        MPI_OK(MPI_Isend(b, 8, MPI_BYTE, MPI_PROC_NULL, 1, g_comms[kDupA].comm, &req));
        pending.push_back({req, -1, false});
        break;
      case 2:
        MPI_OK(MPI_Send_init(b, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Start(&req));
        pending.push_back({req, -1, true});
        break;
      default:
        MPI_OK(MPI_Sendrecv(b, 4, MPI_BYTE, MPI_PROC_NULL, 1, b + 4, 4, MPI_BYTE, MPI_PROC_NULL, 1, g_comms[kDupB].comm,
                            &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Sendrecv with MPI_PROC_NULL: source %d", st.MPI_SOURCE);
        break;
    }
    return;
  }
  int flag = 0;
  MPI_Message msg;
  switch (what) {
    case 0:
      MPI_OK(MPI_Recv(b, 8, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
      CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Recv from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
      break;
    case 1:
    case 2:
      MPI_OK(MPI_Irecv(b, 8, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, g_comms[kDupA].comm, &req));
      MPI_OK(MPI_Wait(&req, &st));
      CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Irecv from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
      break;
    case 3: MPI_OK(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st)); break;
    case 4:
      MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &st));
      CHECK(flag, "Iprobe(MPI_PROC_NULL) flag 0");
      break;
    default:
      MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st));
      CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gave no MPI_MESSAGE_NO_PROC");
      MPI_OK(MPI_Mrecv(b, 8, MPI_BYTE, &msg, &st));
      CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Mrecv(MPI_MESSAGE_NO_PROC): source %d", st.MPI_SOURCE);
      break;
  }
}

void Round::self_send() {
  int size = pick_size(g);
  if (!g.chance(35)) return;
  self_size = size;
  send_bufs.emplace_back();
  fill(send_bufs.back(), size_t(size), msg_key(round, 999));
  MPI_Request req;
  MPI_OK(MPI_Isend(send_bufs.back().data(), size, MPI_BYTE, 0, 11, MPI_COMM_SELF, &req));
  expect_send(MPI_COMM_SELF, 0, 11);
  expect_arrival(MPI_COMM_SELF, 0, 11);
  pending.push_back({req, -1, false});
}

void Round::self_recv() {
  if (self_size < 0) return;
  std::vector<uint8_t> b(size_t(self_size) + 1);
  MPI_Status st;
  if (g_rank % 2) {
    MPI_Message msg;
    MPI_OK(MPI_Mprobe(0, MPI_ANY_TAG, MPI_COMM_SELF, &msg, &st));
    MPI_OK(MPI_Mrecv(b.data(), int(b.size()), MPI_BYTE, &msg, &st));
  } else {
    MPI_OK(MPI_Recv(b.data(), int(b.size()), MPI_BYTE, 0, 11, MPI_COMM_SELF, &st));
  }
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  CHECK(count == self_size &&
            checksum(b.data(), size_t(count)) == expected_checksum(size_t(count), msg_key(round, 999)),
        "self message on MPI_COMM_SELF: %d bytes, expected %d, or bad data", count, self_size);
}

void Round::cancels() {
  for (MPI_Request& req : never) {
    MPI_Status st;
    MPI_OK(MPI_Cancel(&req));
    MPI_OK(MPI_Wait(&req, &st));
    int flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "a receive nothing matches was not cancelled");
  }
  for (Pending& p : cancel_prone) {
    RecvRecord& rec = records[size_t(p.record)];
    const Msg& m = plan[size_t(rec.msg)];
    MPI_OK(MPI_Cancel(&p.req));
    MPI_OK(MPI_Wait(&p.req, &rec.status));
    int flag = 0;
    MPI_Test_cancelled(&rec.status, &flag);
    if (flag) {
      ++stats.cancel_ok;
      MPI_OK(MPI_Recv(rec.buf.data(), int(rec.buf.size()), MPI_BYTE, m.psrc, m.ptag, comm_of(m), &rec.status));
    } else {
      ++stats.cancel_late;
    }
    verify_record(rec);
  }
}

void Round::late_receives() {
  for (const Msg& m : plan) {
    if (m.dst_w != g_rank || m.preposted) continue;
    int r = new_record(m);
    RecvRecord& rec = records[size_t(r)];
    int cap = int(rec.buf.size());
    MPI_Comm c = comm_of(m);
    MPI_Request req;
    MPI_Message msg;
    MPI_Status st;
    int flag = 0;
    ++stats.recvs[m.recv_kind];
    switch (m.recv_kind) {
      case kRecv:
        MPI_OK(MPI_Recv(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, c, &rec.status));
        verify_record(rec);
        break;
      case kIrecvLate:
        MPI_OK(MPI_Irecv(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, c, &req));
        pending.push_back({req, r, false});
        break;
      case kProbe:
      case kIprobe:
        if (m.recv_kind == kProbe) {
          MPI_OK(MPI_Probe(m.psrc, m.ptag, c, &st));
        } else {
          for (int spins = 0; !flag; backoff(spins)) MPI_OK(MPI_Iprobe(m.psrc, m.ptag, c, &flag, &st));
        }
        MPI_OK(MPI_Recv(rec.buf.data(), cap, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, c, &rec.status));
        CHECK(rec.status.MPI_TAG == st.MPI_TAG && rec.status.MPI_SOURCE == st.MPI_SOURCE,
              "probed (%d, %d) but received (%d, %d)", st.MPI_SOURCE, st.MPI_TAG, rec.status.MPI_SOURCE,
              rec.status.MPI_TAG);
        verify_record(rec);
        break;
      case kMprobe:
        MPI_OK(MPI_Mprobe(m.psrc, m.ptag, c, &msg, &st));
        MPI_OK(MPI_Mrecv(rec.buf.data(), cap, MPI_BYTE, &msg, &rec.status));
        verify_record(rec);
        break;
      case kImprobe:
        for (int spins = 0; !flag; backoff(spins)) MPI_OK(MPI_Improbe(m.psrc, m.ptag, c, &flag, &msg, &st));
        MPI_OK(MPI_Imrecv(rec.buf.data(), cap, MPI_BYTE, &msg, &req));
        pending.push_back({req, r, false});
        break;
      default: CHECK(false, "bad late receive kind %d", m.recv_kind);
    }
  }
}

void Round::complete_all() {
  size_t n = pending.size();
  std::vector<MPI_Request> reqs(n);
  std::vector<MPI_Status> st(n);
  for (size_t k = 0; k < n; ++k) reqs[k] = pending[k].req;
  int method = g.below(8);
  std::vector<int> idx(n + 1);
  std::vector<MPI_Status> some_st(n + 1);
  int ni = int(n);
  // Waitsome / Testsome until no request is active (completed persistent
  // requests are inactive and count as null).
  auto some = [&](int (*call)(int, MPI_Request*, int*, int*, MPI_Status*)) {
    for (int out = 0; out != MPI_UNDEFINED;) {
      MPI_OK(call(ni, reqs.data(), &out, idx.data(), some_st.data()));
      for (int k = 0; k < out && out != MPI_UNDEFINED; ++k) st[size_t(idx[size_t(k)])] = some_st[size_t(k)];
    }
  };
  switch (method) {
    case 0: MPI_OK(MPI_Waitall(ni, reqs.data(), st.data())); break;
    case 1:
      for (int i = 0; i != MPI_UNDEFINED;) {
        MPI_Status s;
        MPI_OK(MPI_Waitany(ni, reqs.data(), &i, &s));
        if (i != MPI_UNDEFINED) st[size_t(i)] = s;
      }
      break;
    case 2: some(MPI_Waitsome); break;
    case 3: {
      int flag = 0;
      while (!flag) MPI_OK(MPI_Testall(ni, reqs.data(), &flag, st.data()));
      break;
    }
    case 4:
      for (int i = 0, flag = 0; !(flag && i == MPI_UNDEFINED);) {
        MPI_Status s;
        MPI_OK(MPI_Testany(ni, reqs.data(), &i, &flag, &s));
        if (flag && i != MPI_UNDEFINED) st[size_t(i)] = s;
      }
      break;
    case 5: some(MPI_Testsome); break;
    case 6:
      for (size_t k = n; k-- > 0;) MPI_OK(MPI_Wait(&reqs[k], &st[k]));
      break;
    default:
      for (size_t k = 0; k < n; ++k) {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Test(&reqs[k], &flag, &st[k]));
      }
      break;
  }
  for (size_t k = 0; k < n; ++k) {
    // One-shot persistent requests are inactive now: free them.
    if (pending[k].persistent_free) {
      MPI_Request r = pending[k].req;
      MPI_OK(MPI_Request_free(&r));
    }
    if (pending[k].record >= 0) {
      RecvRecord& rec = records[size_t(pending[k].record)];
      rec.status = st[k];
      verify_record(rec);
    }
  }
  pending.clear();
}

void Round::check_order() {
  std::map<int, std::vector<const RecvRecord*>> by_group;
  for (const RecvRecord& rec : records) {
    const Msg& own = plan[size_t(rec.msg)];
    if (own.style != kTagged) by_group[own.group].push_back(&rec);
  }
  for (auto& [group, recs] : by_group) {
    std::sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->post_seq < b->post_seq; });
    std::map<int, int> last;  // sender -> last plan index received
    for (const RecvRecord* rec : recs) {
      int idx = rec->status.MPI_TAG - kTagBase - 1000 * (round % 7);
      if (idx < 0 || idx >= int(plan.size())) continue;
      int src = plan[size_t(idx)].src_w;
      auto it = last.find(src);
      CHECK(it == last.end() || it->second < idx,
            "group %d: a receive posted later got msg %d from world rank %d before msg %d (non-overtaking)", group,
            it == last.end() ? -1 : it->second, src, idx);
      last[src] = idx;
    }
  }
  for (size_t i = 0; i < plan.size(); ++i)
    if (plan[i].dst_w == g_rank) CHECK(received[i] == 1, "msg %zu received %d times", i, received[i]);
}

}  // namespace workload
