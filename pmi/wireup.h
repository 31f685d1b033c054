// How a rank learns who its peers are: the job-wide key/value exchange.
//
// The real implementation is a PMIx client (Debian's libpmix): it works under
// Sonde's own mpiexec (which hosts a PMIx server), under Open MPI's mpirun and
// under Slurm's `srun --mpi=pmix`. When no PMIx server is around (a program
// started by hand), connect() returns a singleton: rank 0 of 1.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sonde {

class Wireup {
 public:
  // Connects to the PMIx server named by the environment, or makes a
  // singleton. Never returns null; throws std::runtime_error with a clear
  // message if a server is advertised but cannot be reached.
  static std::unique_ptr<Wireup> connect();
  // Does not finalize: a rank that exits without finalize() must look
  // abnormal to its launcher, which ends the job.
  virtual ~Wireup() = default;

  // Calls are not synchronized; the engine serializes them. Ranks given to
  // node_of() and get() outside 0..size()-1 throw std::out_of_range; PMIx
  // failures throw std::runtime_error naming the call.

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Identifies this job on this host; stable across its ranks; safe to use in
  // file names ([A-Za-z0-9] only). Shared-memory objects of the job are named
  // "/sonde-<job_id>-<random>" so the launcher can remove them all.
  // Sonde's mpiexec passes it as SONDE_JOBID; under other launchers it is a
  // digest of the PMIx namespace, the local server's address and the boot id.
  virtual std::string job_id() const = 0;
  // Node index of `rank` (0..nodes-1) as the resource manager reports it.
  virtual int node_of(int rank) const = 0;
  // This process's PMIx namespace; empty for a singleton.
  virtual std::string nspace() const = 0;
  // This node's host name as the resource manager reports it.
  virtual std::string hostname() const = 0;
  // Number of ranks in the job's universe (MPI_UNIVERSE_SIZE).
  virtual int universe_size() const = 0;
  // This process's application number (MPI_APPNUM), or -1 if the launcher
  // does not say (a singleton).
  virtual int appnum() const = 0;

  // Publish a value under `key` for every other rank; visible after commit()
  // and a fence(). Values are bytes (NULs allowed). Keys are short names
  // (under 500 characters); they cannot collide with PMIx's own keys.
  virtual void put(std::string_view key, std::string_view value) = 0;
  virtual void commit() = 0;
  // Collective over all ranks of the job; with `collect` the committed data
  // of every rank is gathered so get() is local afterwards.
  virtual void fence(bool collect = true) = 0;
  // The value `rank` published under `key`, or nullopt. Without a collecting
  // fence, a rank on another node is asked on demand, and PMIx cannot tell
  // "not yet" from "never": a key it never publishes is a std::runtime_error
  // after 60 s. Everywhere else a missing key is reported at once.
  virtual std::optional<std::string> get(int rank, std::string_view key) = 0;

  // Tell the resource manager the job must end (MPI_Abort, fatal errors).
  // Does not return: the process exits with `status` if it is in 1..255, else
  // with 1, so an abort never reads as success.
  [[noreturn]] virtual void abort(int status, std::string_view message) = 0;
  // Disconnect cleanly (MPI_Finalize). Idempotent; put/commit/fence/get
  // afterwards throw std::logic_error.
  virtual void finalize() = 0;
};

}  // namespace sonde
