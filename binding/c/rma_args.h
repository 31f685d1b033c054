// What the one-sided calls of the C binding share (abi_rma_*.cc): raising
// an error through a window's error handler.
#pragma once

#include <cstdio>

#include "binding/c/abi.h"
#include "core/engine.h"
#include "rma/window.h"
#include "runtime/errors.h"

namespace sonde::engine {

// Reports `code` from `fn` on window w (null: no valid window, so
// MPI_COMM_WORLD's handler applies, as MPI says for an invalid handle).
// MPI_ERRORS_RETURN returns the code; a user handler is called with the
// window; the fatal and abort handlers end the job.
inline int raise_win(rma::Window* w, int code, const char* fn) {
  if (!w) return raise(nullptr, code, fn);
  if (w->errhandler == MPI_ERRORS_RETURN) return code;
  if (Errhandler* e = engine().tables().errhandlers.lookup(w->errhandler); e && e->fn) {
    MPI_Win h = w->handle;
    reinterpret_cast<MPI_Win_errhandler_function*>(e->fn)(&h, &code);
    return code;
  }
  char msg[512];
  std::snprintf(msg, sizeof msg, "sonde: rank %d: %s failed on window %s: %s", engine().world_rank(), fn,
                w->name.empty() ? "(unnamed)" : w->name.c_str(), error_string(code));
  end_job(code, msg);
}
inline int finish_win(rma::Window* w, int code, const char* fn) {
  return code == MPI_SUCCESS ? MPI_SUCCESS : raise_win(w, code, fn);
}

}  // namespace sonde::engine
