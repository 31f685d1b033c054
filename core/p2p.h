// The engine's internal point-to-point interface: what the C ABI and the
// collectives are built on. Arguments are already validated; results are MPI
// error classes; no error handler is invoked here (the ABI layer does that).
// Callers hold the engine lock (see engine.h, EngineLock).
#pragma once

#include <cstdint>

#include "core/lookup.h"
#include "core/objects.h"

namespace sonde::engine {

// Start a send / receive on `comm`. `tag` may be a reserved negative tag
// (collectives). `peer` may be MPI_PROC_NULL. *out is an active internal
// request (handle 0) that the caller must wait for or free.
int start_send(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm, SendMode mode,
               Request** out);
int start_recv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, Request** out);

// Blocking conveniences for internal traffic.
int send(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm);
int recv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, MPI_Status* status);
int sendrecv(const void* sbuf, int64_t scount, Datatype* stype, int dest, int stag, void* rbuf, int64_t rcount,
             Datatype* rtype, int source, int rtag, Comm* comm, MPI_Status* status);

// Wait for completion; fills status (may be MPI_STATUS_IGNORE); releases the
// request unless it is persistent. Returns the request's error class.
int wait(Request* r, MPI_Status* status);
int wait_all(int n, Request** rs);

// One pass of the progress engine. Returns the number of events handled.
int progress();

// MPI_Isendrecv(_replace): a user request (RequestKind::kSendrecv) over an
// internal send and receive, completed by progress() once both have. Its
// status is the receive's; its error the first of receive, send. `copy`
// (malloc'ed, or null) is freed when the request completes; *request
// receives the user's handle.
int start_isendrecv(const void* sendbuf, int64_t sendcount, Datatype* st, int dest, int sendtag, void* recvbuf,
                    int64_t recvcount, Datatype* rt, int source, int recvtag, Comm* c, uint8_t* copy,
                    MPI_Request* request);

// MPI_Bsend and friends: the data is copied out at once (issue_send stages
// it), and the transfer runs on a detached internal request that releases
// itself when done. Returns the error class of the copy-out.
int start_detached_bsend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm);

// Reserved tags for the internal traffic of collectives: negative, so users
// cannot send with them and MPI_ANY_TAG never matches them. Tools see them on
// the user's communicator (PERUSE events carry the tag) and can filter
// tag <= kCollectiveTagBase.
inline constexpr int kCollectiveTagBase = -16;
inline int collective_tag(int kind) { return kCollectiveTagBase - kind; }
// Kinds used by the engine itself (collectives use 0.. in coll.h).
inline constexpr int kTagKindCommSplit = 61;  // MPI_Comm_split's exchange of (color, key)
inline constexpr int kTagKindContextId = 62;  // agreeing on a new communicator's context id

}  // namespace sonde::engine
