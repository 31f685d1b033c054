// The engine's control packets (kCts, kData, kFin, kSyncAck, kCtsWrite,
// kWriteDone, kCancelSend, kCancelAck) as a peer would send them, handed to
// Engine::on_header / on_payload_done the way a transport does, with the
// payload they announce. The engine is world rank 0 of 2; rank 1 is played
// by the fuzzer, behind a transport that takes whatever rank 0 sends it
// (so rank 0's answers never come back as packets to judge). Each input
// starts from requests in the steps these packets answer: a rendezvous
// send whose announcement left, a synchronous send waiting for its match,
// a receive that asked rank 1 to stream, a posted receive. The cookies are
// forged (raw bytes, handles near the live ones, or those requests' own).
// Each packet must be taken as its protocol step allows or rejected with a
// message naming the peer (thrown here as Rejected); never a crash, an
// out-of-bounds access or a request queued twice. A rejection ends the
// input as it would end the job; the input's requests are then finished,
// so the next input starts from the same state.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/intrusive/list.hpp>

#include "core/engine_internal.h"
#include "core/p2p.h"

using namespace sonde::engine;
using sonde::transport::Delivery;
using sonde::transport::PayloadSink;
using sonde::transport::SendItem;

namespace {

struct Rejected {};

// Rank 1's end of the link: everything rank 0 sends is taken at once.
class PeerTransport final : public sonde::transport::Transport {
 public:
  const char* name() const override { return "fuzz-peer"; }
  bool reaches(int) const override { return true; }
  bool try_send_now(int, const PacketHeader&, const void*) override { return true; }
  void enqueue(int, SendItem* item) override {
    item->handed = 0;
    queue_.push_back(*item);
  }
  bool dequeue(int, SendItem* item) override {
    if (!item->is_linked()) return false;
    queue_.erase(queue_.iterator_to(*item));
    return true;
  }
  int progress(Delivery&) override {
    int n = 0;
    while (!queue_.empty()) {
      SendItem& item = queue_.front();
      queue_.pop_front();
      item.handed = item.header.payload;
      item.on_first_byte();
      item.on_handed();
      ++n;
    }
    return n;
  }
  // No single-copy read (the receive asks for a stream); a write reads
  // every byte it is given, as the kernel's copy would.
  bool read_remote(int, uint64_t, void*, size_t) override { return false; }
  bool write_remote(int, uint64_t, const void* src, size_t len) override {
    const auto* p = static_cast<const volatile uint8_t*>(src);
    for (size_t i = 0; i < len; ++i) sink_ += p[i];
    return true;
  }

 private:
  boost::intrusive::list<SendItem> queue_;
  uint8_t sink_ = 0;
};

constexpr int kPeer = 1;
constexpr int64_t kSize = 256;  // above the harness's eager limit: a rendezvous
constexpr uint64_t kMaxPayload = 4096;
const PacketType kControl[] = {PacketType::kCts,        PacketType::kData,     PacketType::kFin,
                               PacketType::kSyncAck,    PacketType::kCtsWrite, PacketType::kWriteDone,
                               PacketType::kCancelSend, PacketType::kCancelAck};

Engine& started() {
  static bool started = false;
  if (!started) {
    started = true;
    auto t = std::make_unique<PeerTransport>();
    std::vector<sonde::transport::Transport*> route{t.get(), t.get()};
    std::vector<std::unique_ptr<sonde::transport::Transport>> ts;
    ts.push_back(std::move(t));
    engine().on_protocol_error([](const std::string&) { throw Rejected{}; });
    engine().start(0, 2, std::move(ts), std::move(route), {});
    engine().settings().eager_limit = 64;
  }
  return engine();
}

Datatype* bytes_type() { return &engine().tables().datatypes.predefined(1); }  // MPI_CHAR

// Delivers h from rank 1 as a transport would: header check, header,
// payload (zeros), end of payload. Rejected propagates.
void deliver(PacketHeader h) {
  static uint8_t payload[kMaxPayload];
  if (sonde::transport::packet_header_error(h)) throw Rejected{};
  PayloadSink* sink = engine().on_header(kPeer, h);
  if (h.payload != 0 && sink != nullptr) {
    if (sink->contiguous) {
      std::memcpy(sink->contiguous, payload, h.payload);
    } else {
      for (uint64_t off = 0; off < h.payload; off += kMaxPayload)
        sink->unpack(payload, off, std::min<uint64_t>(kMaxPayload, h.payload - off));
    }
  }
  engine().on_payload_done(kPeer, h, sink);
}

PacketHeader packet(PacketType type, uint64_t send_cookie, uint64_t recv_cookie, uint64_t total = 0) {
  PacketHeader h{};
  h.type = type;
  h.send_cookie = send_cookie;
  h.recv_cookie = recv_cookie;
  h.total = total;
  return h;
}

// The input's requests, in the steps the control packets answer.
struct Slots {
  std::vector<char> sbuf = std::vector<char>(kSize, 's'), rbuf = std::vector<char>(kSize), pbuf = std::vector<char>(16);
  char sync_buf[8] = {};
  Request* rendezvous = nullptr;  // its kRts left; waits for kCts, kCtsWrite or kFin
  Request* sync = nullptr;        // eager synchronous: handed, waits for kSyncAck
  Request* streamed = nullptr;    // matched rank 1's kRts, asked for a stream: waits for kData
  Request* posted = nullptr;      // posted, unmatched
  Request* all[4] = {};

  void start() {
    Comm* w = engine().world();
    start_send(sbuf.data(), kSize, bytes_type(), kPeer, 1, w, SendMode::kStandard, &rendezvous);
    start_send(sync_buf, 8, bytes_type(), kPeer, 2, w, SendMode::kSync, &sync);
    start_recv(rbuf.data(), kSize, bytes_type(), kPeer, 3, w, &streamed);
    start_recv(pbuf.data(), 16, bytes_type(), kPeer, 4, w, &posted);
    PacketHeader rts = packet(PacketType::kRts, 0x77, 0x1000, kSize);
    rts.context = w->context;
    rts.source = kPeer;
    rts.tag = 3;
    deliver(rts);
    engine().progress();  // the sync send is handed, the pull asks for the stream
    Request* rs[] = {rendezvous, sync, streamed, posted};
    std::memcpy(all, rs, sizeof rs);
  }

  // Ends every request as the job's end would: legitimate answers where
  // the request still takes them, else completed here.
  void finish() {
    Engine& e = engine();
    // Until rank 0 has nothing left to send (deferred work included).
    auto settle = [&e] {
      for (int i = 0; i < 16 && e.progress() != 0; ++i) {
      }
    };
    for (int round = 0; round < 4; ++round) {
      settle();
      try {
        if (!rendezvous->complete) deliver(packet(PacketType::kFin, cookie_of(rendezvous), 0));
      } catch (const Rejected&) {
      }
      try {
        if (!sync->complete) deliver(packet(PacketType::kSyncAck, cookie_of(sync), 0));
      } catch (const Rejected&) {
      }
      try {
        if (!streamed->complete) {
          PacketHeader d = packet(PacketType::kData, 0x77, cookie_of(streamed), kSize);
          d.payload = kSize;
          deliver(d);
        }
      } catch (const Rejected&) {
      }
    }
    settle();
    if (!posted->complete) e.cancel_recv(posted);
    for (Request* r : all) {
      if (!r->complete) {
        if (r->kind == RequestKind::kRecv && r->is_linked()) r->comm->queues.cancel(r);
        r->cancel_state = 0;
        e.complete(r);
      }
    }
    wait_all(4, all);
  }
};

uint64_t cookie(uint8_t form, uint64_t raw, const Slots& s) {
  switch (form & 3) {
    case 1: return cookie_of(s.all[(form >> 2) & 3]);
    case 2: return uint64_t(uint32_t(make_handle(SONDE_KIND_REQUEST, uint32_t(raw >> 8), uint32_t(raw % 16))));
    default: return raw;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  started();
  Slots s;
  s.start();
  // Each packet: 1 byte type, 1 byte cookie forms (send: bits 0-3, receive:
  // bits 4-7), then the header's bytes.
  constexpr size_t kRecord = 2 + sizeof(PacketHeader);
  try {
    for (; size >= kRecord; data += kRecord, size -= kRecord) {
      PacketHeader h;
      std::memcpy(&h, data + 2, sizeof h);
      h.type = kControl[data[0] % (sizeof kControl / sizeof kControl[0])];
      h.payload = h.type == PacketType::kCtsWrite ? 8 : h.type == PacketType::kData ? h.payload % kMaxPayload : 0;
      h.send_cookie = cookie(data[1] & 15, h.send_cookie, s);
      h.recv_cookie = cookie(data[1] >> 4, h.recv_cookie, s);
      deliver(h);
      engine().progress();  // rank 0's answers go out
    }
  } catch (const Rejected&) {
  }
  s.finish();
  return 0;
}
