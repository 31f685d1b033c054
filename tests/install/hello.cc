// A C++ program compiled by the installed mpicxx: mpi.h must be usable from
// C++ (extern "C" linkage) next to the standard library.
#include <mpi.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string who = "c++ rank " + std::to_string(rank) + " of " + std::to_string(size);
  std::cout << who << std::endl;
  MPI_Finalize();
  return 0;
}
