/* PERUSE 2.0 (Performance Revealing Extensions Interface) for Sonde.
 *
 * Events fire from inside Sonde's matching engine and transports: see
 * docs/peruse.md for exactly where each event fires on every path (eager,
 * rendezvous, single copy, probe, cancel, MPI_PROC_NULL, self, collectives).
 *
 * Sonde's choices where the specification leaves them to implementations:
 * - peruse_event_h is a long: slot index and generation, never 0 for a live
 *   handle, so released and forged handles are detected
 *   (PERUSE_ERR_EVENT_HANDLE) and handles of freed communicators answer
 *   PERUSE_ERR_MPI_OBJECT.
 * - Any number of handles per (event, communicator); each has its own
 *   activation window and all active ones are invoked.
 * - unique_id: a request's id is stable from REQ_ACTIVATE to REQ_NOTIFY, a
 *   message's from MSG_ARRIVED to its removal or match, a search's from BEGIN
 *   to END; never 0, never shared by two live objects, and request, message
 *   and search ids never coincide.
 * - Queue events are per communicator (PERUSE_PER_COMM): each communicator
 *   has its own posted and unexpected queues.
 * - A callback returning anything but MPI_SUCCESS ends the job: one message
 *   naming the event, the communicator and the value; every rank stops.
 * - PERUSE_COMM_REQ_XFER_CONTINUE (an Open MPI extension, same name) fires
 *   once per data fragment between XFER_BEGIN and XFER_END.
 */
#ifndef SONDE_PERUSE_H
#define SONDE_PERUSE_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef long peruse_event_h; /* opaque event handle */

typedef struct peruse_comm_spec_t {
  MPI_Comm comm;         /* the user's communicator handle */
  void *buf;             /* request events: the user's buffer; message events: NULL */
  int count;             /* request events: the user's count; message events: bytes */
  MPI_Datatype datatype; /* request events: the user's datatype; message events: MPI_BYTE */
  int peer;              /* destination or source as the user gave it; messages: the sender */
  int tag;               /* the user's tag (MPI_ANY_TAG possible); messages: the envelope's */
  int operation;         /* PERUSE_SEND or PERUSE_RECV */
} peruse_comm_spec_t;

typedef int(peruse_comm_callback_f)(peruse_event_h event_h, MPI_Aint unique_id, peruse_comm_spec_t *spec, void *param);
/* The specification's text also calls the callback type by this name. */
typedef peruse_comm_callback_f peruse_comm_callback_t;

/* Return codes. */
enum {
  PERUSE_SUCCESS = 0,
  PERUSE_ERR_INIT,              /* PERUSE initialization failure */
  PERUSE_ERR_GENERIC,           /* generic unspecified error */
  PERUSE_ERR_MALLOC,            /* memory-related error */
  PERUSE_ERR_EVENT,             /* invalid event descriptor */
  PERUSE_ERR_EVENT_HANDLE,      /* invalid event handle */
  PERUSE_ERR_PARAMETER,         /* invalid input parameter */
  PERUSE_ERR_MPI_INIT,          /* MPI is not initialized (or already finalized) */
  PERUSE_ERR_COMM,              /* as MPI_ERR_COMM */
  PERUSE_ERR_MPI_OBJECT,        /* the handle's MPI object was freed */
  PERUSE_ERR_LOCK,              /* error associated with PERUSE_Lock */
  PERUSE_ERR_UNLOCK,            /* error associated with PERUSE_Unlock */
  PERUSE_ERR_LOCK_NOT_GRANTABLE /* unable to grant the PERUSE lock in this upcall */
};
/* Section 5.2.16 spells the last one without ERR_. */
#define PERUSE_LOCK_NOT_GRANTABLE PERUSE_ERR_LOCK_NOT_GRANTABLE

/* Event descriptors. */
enum {
  PERUSE_EVENT_INVALID = 0,
  /* point-to-point request events */
  PERUSE_COMM_REQ_ACTIVATE,
  PERUSE_COMM_REQ_MATCH_UNEX,
  PERUSE_COMM_REQ_INSERT_IN_POSTED_Q,
  PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q,
  PERUSE_COMM_REQ_XFER_BEGIN,
  PERUSE_COMM_REQ_XFER_END,
  PERUSE_COMM_REQ_COMPLETE,
  PERUSE_COMM_REQ_NOTIFY,
  /* message events */
  PERUSE_COMM_MSG_ARRIVED,
  PERUSE_COMM_MSG_INSERT_IN_UNEX_Q,
  PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q,
  PERUSE_COMM_MSG_MATCH_POSTED_REQ,
  /* queue events */
  PERUSE_COMM_SEARCH_POSTED_Q_BEGIN,
  PERUSE_COMM_SEARCH_POSTED_Q_END,
  PERUSE_COMM_SEARCH_UNEX_Q_BEGIN,
  PERUSE_COMM_SEARCH_UNEX_Q_END,
  /* implementation events follow */
  PERUSE_FIRST_CUSTOM_EVENT,
  PERUSE_COMM_REQ_XFER_CONTINUE = PERUSE_FIRST_CUSTOM_EVENT
};
/* The specification uses both spellings for the unexpected-queue search. */
#define PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN PERUSE_COMM_SEARCH_UNEX_Q_BEGIN
#define PERUSE_COMM_SEARCH_UNEX_QUEUE_END PERUSE_COMM_SEARCH_UNEX_Q_END

/* Scope of queue events. */
enum { PERUSE_PER_COMM = 0, PERUSE_PER_TAG, PERUSE_PER_SOURCE, PERUSE_PER_PEER, PERUSE_GLOBAL };

/* Operations. */
enum { PERUSE_SEND = 0, PERUSE_RECV, PERUSE_PUT, PERUSE_GET, PERUSE_ACC, PERUSE_IO_READ, PERUSE_IO_WRITE };

#define PERUSE_FALSE 0
#define PERUSE_TRUE 1
#define PERUSE_EVENT_HANDLE_NULL ((peruse_event_h)0)

/* I. Environment */
SONDE_API int PERUSE_Init(void);
SONDE_API int PERUSE_Query_supported_events(int *num_supported, char ***event_names, int **events);
SONDE_API int PERUSE_Query_event(const char *event_name, int *event);
SONDE_API int PERUSE_Query_event_name(int event, char **event_name);
SONDE_API int PERUSE_Query_environment(int *env_size, char ***env);
SONDE_API int PERUSE_Query_queue_event_scope(int *scope);
SONDE_API int PERUSE_Lock(void);
SONDE_API int PERUSE_Unlock(void);

/* II. Event handles */
SONDE_API int PERUSE_Event_comm_register(int event, MPI_Comm comm, peruse_comm_callback_f *callback_fn, void *param,
                                         peruse_event_h *event_h);
SONDE_API int PERUSE_Event_activate(peruse_event_h event_h);
SONDE_API int PERUSE_Event_deactivate(peruse_event_h event_h);
SONDE_API int PERUSE_Event_release(peruse_event_h *event_h);
SONDE_API int PERUSE_Event_comm_callback_set(peruse_event_h event_h, peruse_comm_callback_f *callback_fn, void *param);
SONDE_API int PERUSE_Event_comm_callback_get(peruse_event_h event_h, peruse_comm_callback_f **callback_fn,
                                             void **param);
SONDE_API int PERUSE_Event_get(peruse_event_h event_h, int *event);
/* *mpi_object receives the communicator's handle value as a pointer-sized
 * integer: MPI_Comm comm = (MPI_Comm)(intptr_t)object. */
SONDE_API int PERUSE_Event_object_get(peruse_event_h event_h, void **mpi_object);
SONDE_API int PERUSE_Event_propagate(peruse_event_h event_h, int mode);

#ifdef __cplusplus
}
#endif

#endif /* SONDE_PERUSE_H */
