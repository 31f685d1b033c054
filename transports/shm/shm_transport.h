// Shared-memory transport between the ranks of one host.
//
// Every ordered pair of local ranks (writer -> reader) has one lock-free
// single-producer/single-consumer byte ring (shm/ring.h), the FIFO any
// packet may take, and beside it a few fast boxes (shm/fast_box.h): one-
// packet slots that carry small packets with a single cache-line handoff.
// Every packet of a pair takes the pair's next sequence number and the reader
// delivers strictly in that order, from whichever of box and ring holds it.
// Each rank creates one shared-memory segment holding its inbound rings and
// boxes, so a rank only ever writes into its peers' segments through its own
// outbound ones.
//
// Fast boxes: a packet whose payload fits one (shm::kFastBoxPayload bytes)
// goes into the box its sequence number selects if that box is free, from
// try_send_now() or from the front of the queue, whether or not the ring
// holds packets; the reader hands the payload straight from the box to the
// sink (contiguous or unpack()) and frees the box after on_payload_done.
//
// Ring framing: a 48-byte PacketHeader is pushed only when it fits whole, so
// the reader sees all of it or none of it; the payload follows as space
// allows. The reader pops payload bytes straight into the sink's contiguous
// buffer (one copy, ring -> user buffer) or through a small bounce buffer into
// unpack().
//
// Backpressure without deadlock: nothing inside the transport waits. A packet
// that does not fit stays in the per-peer FIFO of SendItems, and progress()
// both pushes queued bytes and drains every inbound ring, so two ranks that
// stream large messages at each other keep emptying each other's rings.
//
// Single-copy: read_remote() is process_vm_readv() from the peer's pid and
// write_remote() process_vm_writev() to it; the pid is exchanged at wire-up
// and checked there by reading a cookie from the peer (a pid from another pid
// namespace, or a kernel that refuses, turns single copy off for that peer).
// Unless single copy is off, the transport calls prctl(PR_SET_PTRACER,
// PR_SET_PTRACER_ANY) so that Yama's ptrace_scope=1 lets sibling ranks read
// and write it. Off with ShmConfig::single_copy = false or the environment
// variable SONDE_SHM_SINGLE_COPY=0 (read at construction); then read_remote()
// and write_remote() always return false and the engine streams instead.
// Fast boxes are off with ShmConfig::fast_boxes = false or
// SONDE_SHM_FAST_BOXES=0 (also read at construction): this rank then sends
// everything through the ring (it still reads its peers' boxes, so ranks need
// not agree).
//
// Re-entrancy: Delivery and SendItem callbacks may call try_send_now(),
// enqueue(), dequeue(), read_remote() and write_remote() on this transport.
// enqueue() may hand the item over (calling its callbacks, on_handed()
// included) before it returns. A progress() called from inside a callback
// returns 0 at once.
//
// try_send_now() takes a packet only if it fits a free fast box, or header
// and payload fit in the ring's free space right now, so packets larger than
// ShmConfig::ring_bytes always go through enqueue(). Items still queued when
// the transport is destroyed must outlive it (its destructor unlinks them).
//
// Nothing allocates after construction. SendItem callbacks follow
// self_transport.h: on_first_byte() after the first chunk (or right before
// on_handed() for an empty payload), on_progress() after each further chunk
// that does not finish the payload, on_handed() after the last one, when the
// item is already unlinked.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transports/exchange.h"
#include "transports/shm/ring.h"
#include "transports/transport.h"

namespace sonde::transport {

struct ShmConfig {
  int my_rank = 0;                      // world rank of this process
  std::vector<int> local_ranks;         // world ranks on this host, my_rank included,
                                        // the same set on each of them (any order;
                                        // wire-up fails if they disagree)
  std::string job_id;                   // [A-Za-z0-9]+, names the segments
  bool single_copy = true;              // false: read_remote() refuses (tests the fallback)
  bool fast_boxes = true;               // false: we send every packet through the ring
  size_t ring_bytes = shm::kRingBytes;  // one of shm::kRingSizes, equal on all ranks
  // Called with a message naming the peer when what it wrote into our
  // segment is malformed (transport::packet_header_error, a fast box
  // claiming more payload than it holds); must not return. Unset: the
  // message goes to stderr and the process exits with status 1.
  std::function<void(const std::string&)> fatal;
};

// Wires up the shm transport. Collective over EVERY rank of the job (the
// exchange's fence is job-wide), even ranks alone on their host: each calls
// exchange.put() (key "sonde.shm") and commit() once, then fence() exactly
// twice, and nothing else collective. When this returns, no shared-memory
// object of this rank is left in /dev/shm: every segment was unlinked as
// soon as every local peer had mapped it.
//
// Throws std::invalid_argument on a bad config (before touching the
// exchange) and std::runtime_error if the system refuses (shm_open, mmap) on
// this rank or on a local peer; in the latter case it still takes part in
// both fences first so that no peer is left waiting.
std::unique_ptr<Transport> make_shm_transport(const ShmConfig& config, Exchange& exchange);

}  // namespace sonde::transport
