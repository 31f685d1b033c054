/* With libfabric's shm provider, each rank's region in /dev/shm carries the
 * job's name ("sonde-<job_id>-ofi-<rank>"), not the provider's default
 * "<pid>:0:0": a region left by a killed process must not collide with a
 * later process that gets the same pid, and mpiexec removes the job's
 * regions with its other shared memory. Prints SONDE_JOBID=<id> for
 * run_job.sh --clean-shm. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* job = getenv("SONDE_JOBID");
  if (!job) {
    fprintf(stderr, "shm_region_named: no SONDE_JOBID (not under Sonde's mpiexec)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char path[512];
  snprintf(path, sizeof path, "/dev/shm/sonde-%s-ofi-%d", job, rank);
  struct stat st;
  int ok = stat(path, &st) == 0, all = 0;
  if (!ok) fprintf(stderr, "shm_region_named: rank %d: %s does not exist\n", rank, path);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("SONDE_JOBID=%s\n", job);
    if (all) printf("shm_region_named: ok\n");
  }
  MPI_Finalize();
  return all ? 0 : 1;
}
