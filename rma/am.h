// The active messages that carry one-sided operations and their
// synchronization over the engine's point-to-point traffic, so every
// transport (self, shm, ofi) serves RMA the same way.
//
// Each window's hidden communicator has two channels:
// - the header channel (tag kTagHeader): one receive from MPI_ANY_SOURCE is
//   always posted; a message of at most kInlineLimit bytes carries a Header,
//   the target segments and the data together;
// - the payload channel (tag kTagPayload): when segments and data do not fit
//   inline, the header announces them and they follow as one message from
//   the same origin. When the segments fit in the header's message the data
//   travels alone, and lands where it belongs: a put's into the target's
//   window when its segments are one range inside it, an answer's into the
//   origin's result buffer; otherwise into a buffer of its size.
// The target applies messages strictly in arrival order (a message whose
// payload is still arriving holds the ones behind it), so operations from
// one origin to one target take effect in the order they were issued:
// accumulates to the same location are ordered, and a flush or unlock
// request answered by the target covers everything sent before it.
//
// Progress: a progress hook (core/progress_hooks.h) runs the windows with
// work in every pass of the engine's progress, so a target applies
// operations and grants locks inside whatever MPI call it is making. A
// window has work from the moment one of its channel receives completes
// (Request::on_complete puts it on an intrusive list) or it sends, until
// its arrivals are applied and its sends retired; idle windows cost
// progress nothing, however many there are. A
// target that makes no MPI call at all applies nothing: an origin's flush,
// unlock or get to it waits until it does.
//
// Target segments are (offset, length) runs in the target's memory, offset
// in bytes from the start of its window (from address 0 for a dynamic
// window), in the target datatype's pack order; the data is the packed
// origin data, so an accumulate is applied on the target's data packed the
// same way (basic elements, pairs without padding).
#pragma once

#include <cstdint>
#include <vector>

#include "core/p2p.h"
#include "rma/window.h"

namespace sonde::engine::rma {

// Reserved negative tags (core/p2p.h, kinds 55 and 56), which no user
// receive matches and tools can tell apart (tag <= kCollectiveTagBase).
inline constexpr int kTagHeader = kCollectiveTagBase - 55;
inline constexpr int kTagPayload = kCollectiveTagBase - 56;
inline constexpr size_t kInlineLimit = 4096;

enum class Kind : uint8_t {
  kPut = 1,
  kAcc,       // accumulate: op applied to the packed data
  kGet,       // answered by kReply with the data
  kGetAcc,    // answered by kReply with the data before the accumulate
  kCas,       // compare and swap: data is (new value, compare value)
  kReply,     // to the origin: the answer of operation `id`
  kFlush,     // answered by kAck once everything before it is applied
  kAck,       // to the origin: `arg` is the first error since the last one
  kLock,      // `arg` lock type; answered by kGrant when granted
  kGrant,     //
  kUnlock,    // release the lock; answered by kAck
  kPost,      // MPI_Win_post to an origin of the group
  kComplete,  // MPI_Win_complete to a target of the group
};

struct Segment {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Where a message's segments and data travel (Header::body).
enum Body : uint8_t {
  kBodyFollows = 0,  // segments and data in one message on the payload channel
  kBodyInline = 1,   // segments and data in this message
  kDataFollows = 2,  // segments in this message, the data alone on the payload channel
};

struct Header {
  Kind kind = Kind::kPut;
  uint8_t body = kBodyInline;
  uint16_t reserved = 0;
  int32_t op = MPI_REPLACE;  // kAcc/kGetAcc: a predefined operation
  int32_t basic = 0;         // kAcc/kGetAcc: the Basic of the elements
  int32_t arg = 0;           // kLock: lock type; kAck: error class
  uint64_t id = 0;           // origin's operation id (kGet, kGetAcc, kCas, kReply)
  uint64_t segments = 0;     // number of Segment records
  uint64_t data_bytes = 0;   // bytes of data after the segments
};

// The target segments of (count, type) at byte displacement `disp`: runs in
// pack order, adjacent runs merged.
void target_segments(const Datatype& type, int64_t count, int64_t disp, std::vector<Segment>& out);

// Sends one message to `target` (a rank of w->comm): header, segments,
// data. The bytes are copied out before this returns; `owned`, when given,
// holds the data and is moved from instead when the data travels alone.
int send_message(Window* w, int target, Header h, const std::vector<Segment>& segs, const uint8_t* data, uint64_t bytes,
                 Bytes* owned = nullptr);

// Posts the window's header receive (creation) and cancels it (free).
int open_channel(Window* w);
void close_channel(Window* w);
// Runs the window's channel: applies what has arrived. Returns how many
// messages moved.
int run_window(Window* w);
// Takes the window off the list of windows with work (MPI_Win_free,
// after its channel closed).
void forget_work(Window* w);

// Waits (driving progress) until done() holds.
template <class F>
void wait_until(F done);
void wait_pass(int& idle);
template <class F>
void wait_until(F done) {
  int idle = 0;
  while (!done()) wait_pass(idle);
}

}  // namespace sonde::engine::rma
