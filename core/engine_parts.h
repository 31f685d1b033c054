// The named parts of the Engine's state (core/engine.h): the handle tables,
// the router, the context-id registry and the buffered-send arena. The
// Engine owns one of each; the layers above reach them through the Engine's
// accessors and change them only through the calls declared here.
#pragma once

#include <boost/intrusive/list.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/handles.h"
#include "core/objects.h"
#include "include/mpi.h"
#include "transports/transport.h"

namespace sonde::engine {

class Engine;

struct Errhandler {
  bool live = false;
  // User handlers (binding/c/abi_errhandler.cc): the function, and the
  // user's references (create and get add one, free drops one). The slot is
  // never reused, so a communicator may keep using a handler its user freed.
  MPI_Comm_errhandler_function* fn = nullptr;
  int user_refs = 0;
};

// The objects the core hands out as MPI handles; the request and message
// tables are the pools every operation draws its descriptors from.
struct HandleTables {
  HandleTable<Comm, SONDE_KIND_COMM> comms{2};
  HandleTable<Datatype, SONDE_KIND_DATATYPE> datatypes{SONDE_PREDEFINED_DATATYPES - 1};
  HandleTable<Request, SONDE_KIND_REQUEST> requests{0};
  HandleTable<Message, SONDE_KIND_MESSAGE> messages{1};  // 1: MPI_MESSAGE_NO_PROC
  HandleTable<Errhandler, SONDE_KIND_ERRHANDLER> errhandlers{3};
};

// The transports this process built and which one reaches each world rank
// (and each peer outside the world: Engine::add_route). Set by
// Engine::start, extended only by add_transport/add_route.
class Router {
 public:
  // The transport reaching `world_rank` (0 <= world_rank < peer count).
  transport::Transport* to(int world_rank) const { return route_[size_t(world_rank)]; }
  // Every transport, in the order the runtime built them.
  const std::vector<std::unique_ptr<transport::Transport>>& transports() const { return transports_; }

 private:
  friend class Engine;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<transport::Transport*> route_;
};

// Context ids: which are free (a bit set, 1 = free, in 64-bit words) and the
// communicator matching on each one that is taken. Messages for a context
// not created here yet wait in the Engine's early list (a peer may finish
// MPI_Comm_dup before this process does).
class ContextRegistry {
 public:
  // Communicators that can exist at once, hidden ones included (a bit each
  // in the free map, 16 KiB; by_context grows to the highest id in use,
  // doubling; a communicator itself costs a few hundred bytes, its queues
  // allocate only when they hold entries). An agreement round moves a window
  // of the free map from every member (comm/context_window.h), not the
  // whole of it.
  static constexpr uint32_t kMaxContexts = uint32_t(1) << 17;

  // The communicator matching on `context`, or null.
  Comm* find(uint32_t context) const { return context < by_context_.size() ? by_context_[context] : nullptr; }
  // Makes `context` find `c` (null: nothing), growing the table as needed.
  void set(uint32_t context, Comm* c) {
    if (context >= by_context_.size())
      by_context_.resize(std::max<size_t>(context + 1, 2 * by_context_.size()), nullptr);
    by_context_[context] = c;
  }

  // The free set, one bit per id; the agreement on a new id (comm/) ANDs
  // windows of these words across the members.
  const std::vector<uint64_t>& free_words() const { return free_; }
  // Marks the ids set in `bits` of word `i` taken / free again.
  void take_bits(size_t i, uint64_t bits) { free_[i] &= ~bits; }
  void give_back_bits(size_t i, uint64_t bits) { free_[i] |= bits; }
  void take(uint32_t id) { take_bits(id / 64, uint64_t(1) << (id % 64)); }
  void give_back(uint32_t id) { give_back_bits(id / 64, uint64_t(1) << (id % 64)); }

 private:
  friend class Engine;
  std::vector<Comm*> by_context_;
  std::vector<uint64_t> free_;
};

// The buffer of MPI_Buffer_attach: buffered sends reserve their bytes (plus
// MPI_BSEND_OVERHEAD) in it until their message has left.
class BsendArena {
 public:
  bool attached() const { return buffer_ != nullptr; }
  // Bytes reserved by buffered sends still in flight.
  int64_t used() const { return used_; }
  // MPI_Buffer_attach: false if a buffer is attached already.
  bool attach(void* buffer, int64_t size) {
    if (buffer_) return false;
    buffer_ = buffer;
    size_ = size;
    used_ = 0;
    return true;
  }
  // MPI_Buffer_detach, once used() is 0: the buffer and size given to attach.
  void detach(void** buffer, int64_t* size) {
    *buffer = buffer_;
    *size = size_;
    buffer_ = nullptr;
    size_ = 0;
  }
  // Takes `bytes` for a buffered send; false if they do not fit.
  bool reserve(int64_t bytes) {
    if (!buffer_ || used_ + bytes > size_) return false;
    used_ += bytes;
    return true;
  }
  void give_back(int64_t bytes) { used_ -= bytes; }

 private:
  void* buffer_ = nullptr;
  int64_t size_ = 0;
  int64_t used_ = 0;
};

}  // namespace sonde::engine
