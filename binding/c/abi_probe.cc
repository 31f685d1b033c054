// C ABI: probes and matched receives (MPI 4.1 sections 3.8.1-3.8.3):
// MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv and MPI_Imrecv
// (with their large-count _c forms).
#include <cstdint>

#include "binding/c/abi.h"
#include "core/engine.h"
#include "core/p2p.h"
#include "core/stamp.h"

using namespace sonde::engine;

extern "C" {

// Probes complete one call each: status.MPI_ERROR is not theirs to set.
static void message_status(const Message* m, MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE || !status) return;
  status->MPI_SOURCE = m->header.source;
  status->MPI_TAG = m->header.tag;
  status->sonde_cancelled = 0;
  status->sonde_count = static_cast<long long>(m->header.total);
}

static void proc_null_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE || !status) return;
  status->MPI_SOURCE = MPI_PROC_NULL;
  status->MPI_TAG = MPI_ANY_TAG;
  status->sonde_cancelled = 0;
  status->sonde_count = 0;
}

static int check_probe(int source, int tag, MPI_Comm comm, Comm** c) {
  *c = find_comm(comm);
  if (!*c) return MPI_ERR_COMM;
  if (tag != MPI_ANY_TAG && tag < 0) return MPI_ERR_TAG;
  if (source != MPI_ANY_SOURCE && source != MPI_PROC_NULL && (source < 0 || source >= (*c)->peers()))
    return MPI_ERR_RANK;
  return MPI_SUCCESS;
}

// Probe until a message is found (blocking) or once (non-blocking). A
// blocking probe records what it waits for while it waits, an Iprobe loop
// on the rare pass that finds it has been polling in vain
// (core/current_call.h), for snapshots.
static Message* probe_loop(Comm* c, int source, int tag, bool block, const char* fn) {
  Engine& e = engine();
  int idle = 0;
  if (!block) {
    Message* m = e.probe(c, source, tag);
    if (!m) {
      const int moved = e.progress();
      if (e.fruitless(moved)) {
        e.watch_peer(c, source);  // an Iprobe loop finding nothing: watch the peers' liveness
        // The loop's age counts from the first pass seen polling in vain.
        const ProbeWait& was = t_probe_polling;
        const bool same = was.call == fn && was.context == c->context && was.source == source && was.tag == tag;
        t_probe_polling = {c->context, source, tag, fn, same ? was.since : stamp_now()};
      }
      if (moved != 0) m = e.probe(c, source, tag);
    }
    if (m) t_probe_polling.call = nullptr;
    return m;
  }
  Message* m = e.probe(c, source, tag);
  if (m) return m;
  t_probe_wait = {c->context, source, tag, fn, stamp_now()};
  while (!(m = e.probe(c, source, tag))) {
    if (e.wait_pass(idle)) e.watch_peer(c, source);  // watch the peers' liveness
  }
  t_probe_wait.call = nullptr;
  t_probe_polling.call = nullptr;
  return m;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  SONDE_ENTER("MPI_Probe");
  Comm* c;
  int rc = check_probe(source, tag, comm, &c);
  if (rc) return raise(c, rc, fn);
  if (source == MPI_PROC_NULL) {
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  message_status(probe_loop(c, source, tag, true, fn), status);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Probe)

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  SONDE_ENTER("MPI_Iprobe");
  Comm* c;
  int rc = check_probe(source, tag, comm, &c);
  if (rc) return raise(c, rc, fn);
  if (!flag) return raise(c, MPI_ERR_ARG, fn);
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  Message* m = probe_loop(c, source, tag, false, fn);
  *flag = m != nullptr;
  if (m) message_status(m, status);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Iprobe)

static int matched_probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status,
                         bool block, const char* fn) {
  Comm* c;
  int rc = check_probe(source, tag, comm, &c);
  if (rc) return raise(c, rc, fn);
  if (!message || (!block && !flag)) return raise(c, MPI_ERR_ARG, fn);
  if (source == MPI_PROC_NULL) {
    if (flag) *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  Message* m = probe_loop(c, source, tag, block, fn);
  if (flag) *flag = m != nullptr;
  if (!m) return MPI_SUCCESS;
  engine().take_message(c, m);
  m->claimed = true;
  *message = m->handle;
  message_status(m, status);
  return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Mprobe");
  return matched_probe(source, tag, comm, nullptr, message, status, true, fn);
}
SONDE_WEAK_ALIAS(Mprobe)

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Improbe");
  return matched_probe(source, tag, comm, flag, message, status, false, fn);
}
SONDE_WEAK_ALIAS(Improbe)

// Start a receive on a message taken by Mprobe/Improbe.
static int receive_claimed(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message, Request** out,
                           const char* fn) {
  if (!message) return raise(nullptr, MPI_ERR_ARG, fn);
  Engine& e = engine();
  Datatype* t = find_comm_datatype(datatype);
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (buf == MPI_IN_PLACE) return raise(nullptr, MPI_ERR_BUFFER, fn);  // only collectives take it
  if (!datatype_fits(*t, count)) return raise(nullptr, MPI_ERR_COUNT, fn);
  // Peer and communicator come from the message (set below).
  Request* r = e.new_request(RequestKind::kRecv, buf, count, t, MPI_ANY_SOURCE, MPI_ANY_TAG, nullptr);
  if (!r) return raise(nullptr, MPI_ERR_INTERN, fn);
  *out = r;
  if (*message == MPI_MESSAGE_NO_PROC) {
    r->comm = e.self();
    r->peer = MPI_PROC_NULL;
    *message = MPI_MESSAGE_NULL;
    return e.issue_recv(r);
  }
  Message* m = e.tables().messages.lookup(*message);
  if (!m || !m->claimed) {
    e.release(r);
    *out = nullptr;
    return raise(nullptr, MPI_ERR_REQUEST, fn);
  }
  m->claimed = false;
  r->comm = m->comm;
  r->peer = m->header.source;
  *message = MPI_MESSAGE_NULL;
  return e.receive_message(r, m);
}

static int mrecv(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status,
                 const char* fn) {
  Request* r = nullptr;
  int rc = receive_claimed(buf, count, datatype, message, &r, fn);
  if (!r) return rc;
  Comm* c = r->comm;
  rc = wait(r, status);
  return finish(c, rc, fn);
}

static int imrecv(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request,
                  const char* fn) {
  if (!request) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = nullptr;
  int rc = receive_claimed(buf, count, datatype, message, &r, fn);
  if (!r) return rc;
  *request = r->handle;
  return MPI_SUCCESS;
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Mrecv");
  return mrecv(buf, count, datatype, message, status, fn);
}
SONDE_WEAK_ALIAS(Mrecv)

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  SONDE_ENTER("MPI_Imrecv");
  return imrecv(buf, count, datatype, message, request, fn);
}
SONDE_WEAK_ALIAS(Imrecv)

int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Mrecv_c");
  return mrecv(buf, count, datatype, message, status, fn);
}
SONDE_WEAK_ALIAS(Mrecv_c)

int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  SONDE_ENTER("MPI_Imrecv_c");
  return imrecv(buf, count, datatype, message, request, fn);
}
SONDE_WEAK_ALIAS(Imrecv_c)

}  // extern "C"
