#!/bin/bash
# libsonde_residence.so must export exactly its MPI_ interceptors (set-up and
# communicators; the blocking calls and MPI_Type_free for the timeline): anything
# else (its tables, C++ template instances) could clash with the program or
# another tool it is preloaded beside.
set -u
lib="$1"
want="MPI_Comm_dup MPI_Comm_free MPI_Comm_split MPI_Finalize MPI_Init MPI_Init_thread MPI_Probe MPI_Recv MPI_Send MPI_Sendrecv MPI_Ssend MPI_Type_free MPI_Wait MPI_Waitall MPI_Waitany"
got=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sort | tr '\n' ' ' | sed 's/ $//')
echo "exported: $got"
if [[ "$got" != "$want" ]]; then
  echo "FAIL: expected exactly: $want" >&2
  exit 1
fi
# And it depends on libsonde.so, so preloading it into a Sonde program adds
# no second MPI library.
readelf -d "$lib" | grep -q 'NEEDED.*\[libsonde.so\]' || { echo "FAIL: not linked against libsonde.so" >&2; exit 1; }
echo "ok"
