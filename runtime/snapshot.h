// A rank's state on request: the MPI call it is in, its posted receives,
// unexpected messages, pending sends and the collectives it has started,
// written when it receives the snapshot signal (SIGUSR1 unless
// SONDE_SNAPSHOT_SIGNAL names another number; 0 turns it off). The
// handler is installed when the engine starts, only over the default
// disposition, so a program's own handler wins.
//
// Where it goes: with SONDE_SNAPSHOT_DIR set (Sonde's mpiexec and
// sonde-hostd set it; the handler, once installed, creates DIR/ready-R, and
// the launcher signals no rank before that), a request numbered N in DIR/request makes the rank
// write DIR/rank-R (through DIR/rank-R.tmp and a rename), and a signal with
// no new request does nothing (the launcher repeats its signal until the
// rank answers); without SONDE_SNAPSHOT_DIR (Open MPI's mpirun, Slurm) each
// signal prints the same text to the rank's stderr.
//
// The text, one record per line, words separated by single spaces
// (docs/launch.md, "When a job hangs", is the reference):
//   sonde-snapshot 1
//   seq N                      (0 when not asked through a request file)
//   rank R
//   pid P
//   call NAME                  (the MPI call in progress, "-" in user code,
//                               "finalized" once the engine is down)
//   arrivals N                 (moves with every message that arrives)
//   comm ctx=C handle=0xH name=NAME rank=R size=S inter=0|1 coll=N world=W0,W1,... [coll_age_us=A]
//   peer id=I nspace=NS rank=R (a world= id past the world's own ranks: a
//                               process of another job, by PMIx name)
//   recv id=0xI ctx=C src=S tag=T count=N type=NAME stage=posted|arriving [coll=CALL#SEQ] [age_us=A]
//   send id=0xI ctx=C dest=D tag=T count=N bytes=B sync=0|1 stage=STAGE [coll=CALL#SEQ] [age_us=A]
//   unexp id=0xI ctx=C src=S tag=T bytes=B [coll=CALL#SEQ] [age_us=A]
//   probe ctx=C src=S tag=T call=NAME blocking=0|1 [age_us=A]
//                              (a probe finding nothing: blocking=1 while
//                               MPI_Probe/MPI_Mprobe waits; blocking=0 for an
//                               Iprobe/Improbe loop, core/current_call.h)
//   omitted N                  (records left out past the per-kind limit)
//   end
// Names are percent-encoded (bytes <= ' ', '%' and above '~' as %XX);
// src/dest are ranks in the communicator (-2: MPI_ANY_SOURCE, -1: any tag);
// STAGE is eager-queued, rendezvous-wait, transfer or sync-ack; coll= marks
// a collective's internal traffic with its call and sequence number (mod
// 2^24) on that communicator; comm's coll= counts collectives started.
// Ages (core/stamp.h), in microseconds up to the snapshot: age_us= since
// the entry entered its state (a receive posted, or its data began to
// arrive; a send queued or announced, or a synchronous send's data out
// and its acknowledgement awaited; a message arrived; a probe began to
// wait, or an Iprobe loop was first seen polling in vain); coll_age_us=
// since the communicator's latest collective started on this rank.
//
// Under MPI_THREAD_MULTIPLE, call and probe are those of the thread that
// serves the request (one waiting inside MPI); other threads' operations
// appear through their requests.
//
// Safety: the handler serves at once only when the process is in user code
// (core/current_call.h) under MPI_THREAD_SINGLE .. SERIALIZED, redirecting
// itself to the thread that started MPI; otherwise the request waits for
// the next idle pass of a blocking wait. It allocates nothing and calls
// only async-signal-safe functions.
#pragma once

namespace sonde::engine {

// Installs the handler and the wait-side hook (at engine start).
void install_snapshot_handler(int world_rank);
// The engine is about to stop: later signals print "call finalized".
void snapshot_engine_stopping();

}  // namespace sonde::engine
