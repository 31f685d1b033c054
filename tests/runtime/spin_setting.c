/* Prints rank 0's idle spin setting after MPI_Init, read through the MPI_T
 * cvar sonde_spin_before_yield: "spin <value> ranks <size>". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int provided, rank, size, n, index = -1;
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_T_cvar_get_num(&n);
  for (int i = 0; i < n; ++i) {
    char name[256], desc[1024];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope);
    if (strcmp(name, "sonde_spin_before_yield") == 0) index = i;
  }
  unsigned spin = 0;
  MPI_T_cvar_handle h;
  int count;
  if (index < 0 || MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS ||
      MPI_T_cvar_read(h, &spin) != MPI_SUCCESS) {
    fprintf(stderr, "spin_setting: cannot read sonde_spin_before_yield\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_T_cvar_handle_free(&h);
  if (rank == 0) printf("spin %u ranks %d\n", spin, size);
  MPI_Finalize();
  MPI_T_finalize();
  return 0;
}
