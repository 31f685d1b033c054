// What a job leaves on the host, and removing it.
#pragma once

#include <string>

namespace sonde::mpiexec {

// Unlinks every POSIX shared-memory object of the job: /dev/shm/sonde-<job_id>-*
// (the naming rule of pmi/wireup.h). Returns how many it removed.
int remove_job_shm(const std::string& job_id, const std::string& shm_dir = "/dev/shm");

// Creates a directory only we can enter, under $TMPDIR (else /tmp), for the
// PMIx server's rendezvous files, with an owner record naming this process
// and `job_id` (stale_dirs.h). First removes the directories there of
// launchers that died without removing theirs. Throws std::runtime_error on
// failure.
std::string make_private_tmpdir(const std::string& job_id);

// Removes `path` and everything below it, without following symlinks.
void remove_tree(const std::string& path);

}  // namespace sonde::mpiexec
