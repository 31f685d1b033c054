// The process's MPI life cycle: MPI_Init/MPI_Finalize (the World model) and
// the engine start and stop that sessions share with it. The runtime wires
// the job up through PMIx (pmi/wireup.h), builds the transports (self, shm
// among the ranks of a node, ofi to the others) and hands them to the core
// (Engine::start); it ends the job's traffic with a barrier on
// MPI_COMM_WORLD before the core stops them.
//
// Sessions and the World model coexist in one process. The engine runs
// while either is active; MPI_Init after a session started it only marks
// the World model initialized, and MPI_Finalize with sessions open leaves
// the engine to the last MPI_Session_finalize. With sessions only, the
// engine stops at process exit, as MPI_Finalize would stop it.
//
// State lives in the process-state object (core/process.h). Callers hold
// the engine lock where one is on.
#pragma once

#include "pmi/wireup.h"

namespace sonde::engine {

// The job's wire-up while the engine runs, else null.
Wireup* job_wireup();

// MPI_Init / MPI_Init_thread: MPI_ERR_OTHER when called twice.
int init_world(int required, int* provided);
// MPI_Finalize's work after the attribute callbacks have run: tears the
// engine down unless a session still uses it.
int finalize_world();

// Sessions. acquire: starts the engine if nothing runs it yet
// (MPI_ERR_OTHER once MPI_Finalize tore it down), counts a session, gives
// the thread level. release: uncounts; the last one out after MPI_Finalize
// stops the engine.
int session_engine_acquire(int required, int* provided);
int session_engine_release();

// Seconds since the engine started (MPI_Wtime).
double wtime();

}  // namespace sonde::engine
