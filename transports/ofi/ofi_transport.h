// Network transport over libfabric reliable-datagram endpoints (FI_EP_RDM).
//
// What goes on the wire: every transport packet (PacketHeader + payload) is
// cut into *frames* of at most OfiConfig::frame_bytes, each one untagged
// message (fi_send / fi_recv). A frame starts with a 16-byte FrameHeader
// (sender's world rank, per-pair sequence number, returned credits, kind);
// the first frame of a packet carries the PacketHeader and the first payload
// bytes, the following ones only payload. Matching never happens here: the
// engine sees on_header() / on_chunk() / on_payload_done() exactly as with
// shm, so PERUSE events (XFER_CONTINUE per frame) cover network traffic.
//
// Order: frames carry a sequence number per (sender, receiver) and the
// receiver delivers strictly in that order, holding early frames, so the
// FIFO promise of transport.h holds whatever ordering the provider offers
// (ofi_rxd over udp reorders).
//
// Flow control, bounded memory, no deadlock:
//   - credits: a sender has at most `credits` frames in flight to a peer; the
//     receiver returns credits piggy-backed on its own frames, or in a
//     credit-only frame once it owes half of them. The shared pool of posted
//     receive buffers holds peers * (credits + 3) frames, enough for every
//     frame, credit-only frame and keepalive that can be in flight (each
//     credit-only frame answers credits/2 consumed frames, so at most 2 are
//     unread; at most one keepalive per peer is unconsumed), so a frame
//     never arrives without a posted buffer;
//   - at most `tx_buffers` frames are being sent at once (bounce buffers);
//     a packet that cannot go now stays in the per-peer FIFO of SendItems
//     and moves during progress(); -FI_EAGAIN from the provider is retried
//     there too. Nothing in the transport waits.
// Payload bytes of frames are copied into registered bounce buffers (and out
// of them into the engine's sink); providers that want FI_MR_LOCAL get those
// pools registered once at start-up.
//
// Rendezvous by RMA read, where the provider has FI_RMA: the sender's
// transport registers the message's memory (MrCache) and sends the remote
// key in the kRts frame (flag kFrameRmaKey); the receiving engine calls
// start_read(), which fi_reads the data straight into the receive buffer
// in fragments (OfiConfig::read_bytes; a non-contiguous receive reads
// into bounce fragments and unpacks them in order), reports each one
// through on_chunk (PERUSE XFER_CONTINUE) and at the end sends the sender a
// kFin made here. Without RMA, or when registering fails, there is no key:
// start_read() refuses and the engine answers kCts, the sender streams kData
// frames (pipelined sends). read_remote() / write_remote() (synchronous)
// always refuse.
//
// Faults: an error completion (peer died, connection reset) or a peer that
// neither returns credits nor sends anything for `stall_timeout_s` seconds
// while we wait to send to it is fatal: OfiConfig::fatal is called with a
// message naming the peer (the engine aborts the job through PMIx). Where
// the provider has an IP address, peers we talk to or wait on are also
// watched through TCP keepalives their kernel answers (liveness.h,
// OfiConfig::liveness_timeout_s): a host or link that stops answering is
// fatal, and a peer that answers is never taken for dead by silence.
//
// Re-entrancy as for shm: Delivery and SendItem callbacks may call
// try_send_now(), enqueue() and dequeue(); a progress() called from inside a
// callback returns 0 at once.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transports/exchange.h"
#include "transports/transport.h"

namespace sonde::transport {

// The knobs that choose transports, read from the environment (the engine
// reads them at MPI_Init).
struct TransportChoice {
  // SONDE_TRANSPORT: "auto" (default: shm between ranks of one host, ofi
  // between hosts), "ofi" (ofi to every other rank, even on one host), "shm"
  // (never ofi: a job spanning hosts fails at MPI_Init).
  std::string transport = "auto";
  // SONDE_OFI_PROVIDER: libfabric provider name ("tcp", "shm", "sockets",
  // "udp", "verbs"...); empty: libfabric's choice, which FI_PROVIDER filters.
  std::string provider;
};
TransportChoice transport_choice_from_env();

struct OfiConfig {
  int my_rank = 0;
  int world_size = 1;
  std::vector<int> peers;  // world ranks this transport reaches (not my_rank)
  std::string provider;    // as TransportChoice::provider
  // Name of this rank's region when the provider is libfabric's shm (smr),
  // which otherwise names it "<pid>:0:0" in /dev/shm. A region left by a
  // killed process then collides with a later process that gets the same
  // pid (fi_enable: EBUSY). The engine passes "sonde-<job_id>-ofi-<rank>",
  // unique per job and rank and removed by mpiexec with the job's other
  // shared memory. Empty: the provider's own name.
  std::string shm_region_name;
  size_t frame_bytes =
      64 * 1024 +
      64;           // largest frame, FrameHeader included (+64: a 64 KiB eager message and its headers fit one frame)
  int credits = 8;  // frames in flight per peer (even, >= 2)
  int tx_buffers = 64;  // frames being sent at once, all peers
  // SONDE_OFI_STALL_TIMEOUT overrides. Silence and stalls of a peer whose
  // TCP liveness connection is healthy (below) never count: its host
  // answers, it is busy. For the others (providers without an IP address,
  // liveness off, a peer whose liveness connection closed) a peer that
  // merely computes outside MPI looks the same as one whose link died, so
  // the default is long: about as long as the kernel retransmits before
  // giving up on a TCP connection (tcp_retries2 = 15).
  double stall_timeout_s = 900;
  // SONDE_OFI_LIVENESS_TIMEOUT overrides; <= 0: off. Peers we talk to or
  // wait on get a TCP connection with keepalives to a socket of theirs on
  // the provider's IP address (liveness.h), answered by their kernel even
  // while they compute: a host or link that answers nothing for about this
  // long ends the job ("lost rank N").
  double liveness_timeout_s = 60;
  // Rendezvous by RMA read: fragment size, fragments in flight per message
  // and in all (SONDE_OFI_READ_BYTES overrides the first).
  size_t read_bytes = 128 * 1024;  // measured against 256 KiB and 1 MiB: docs/ofi.md
  // Messages of at most this many bytes go eagerly to peers on this
  // transport (Capabilities::eager_limit; env overrides in the constructor).
  uint64_t eager_limit = 64 * 1024;
  int reads_per_message = 4;
  int reads_in_flight = 16;
  // Called on a fatal network error; expected not to return (if it does,
  // the process exits with status 1).
  std::function<void(const std::string&)> fatal;
};

// Wires up the ofi transport. Collective over EVERY rank of the job: each
// calls exchange.put("ofi.addr") and put("ofi.live"), commit() once, then
// fence() once. Throws std::runtime_error if libfabric offers no usable
// provider (after taking part in the fence, so that no peer is left waiting).
std::unique_ptr<Transport> make_ofi_transport(const OfiConfig& config, Exchange& exchange);

// "provider;fabric;domain" the transport picked (after make_ofi_transport),
// for diagnostics and tests; empty before.
std::string ofi_selected_provider(const Transport& ofi);

// Whether the provider reads remote memory (rendezvous by fi_read), and how
// many user-memory registrations the transport has made so far (the cache's
// misses), for tests.
bool ofi_has_rma(const Transport& ofi);
uint64_t ofi_registrations(const Transport& ofi);

// This rank's TCP liveness address ("ip:port"), empty when liveness is off
// (provider without an IP address, or liveness_timeout_s <= 0); for tests.
std::string ofi_liveness_address(const Transport& ofi);

// Whether the provider's data progress is manual (driven by the engine's
// completion-queue reads) rather than a thread of its own; for tests.
bool ofi_manual_progress(const Transport& ofi);

}  // namespace sonde::transport
