// Dynamic processes (MPI 4.1 chapter 11): MPI_Comm_spawn(_multiple),
// MPI_Comm_get_parent, ports and accept/connect, the name service, and
// MPI_Comm_join. Every one ends in the same *connection* of two groups of
// processes that may live in different jobs (PMIx namespaces):
//
//   1. Each side knows the other's members by PMIx name (namespace, rank):
//      spawn passes the parents' names to the children in their environment
//      (SONDE_SPAWN_PARENTS), accept/connect swap them through the launcher's
//      name service, join over the socket.
//   2. Processes not seen before get engine peer ids from
//      Engine::peer_count() on (core/engine.h); ids are this process's alone.
//   3. Transports: every member of both groups (the *union*, the low side
//      first) publishes its host, and whether it lacks a route to another
//      member, under keys of this connection's own (named by its child
//      namespace, port and nonce, or join nonces) and takes part in PMIx
//      fences over the union. Unless every member already reaches every
//      other (two groups of one job; groups connected before), a new shm
//      transport is wired over the union's members on this host, with union
//      indices as its ranks, wrapped so the engine sees peer ids
//      (RemappedTransport). Members on other hosts: the connection fails
//      with MPI_ERR_OTHER on every member alike.
//   4. Context ids: the members share no communicator yet, so they agree
//      through PMIx too (comm/comm_build.h, agree_contexts_apart): each
//      round's offers are values under the connection's keys, made readable
//      by a fence over the union (the first round's fence is the hosts'),
//      and every member ANDs the same offers and decides alike. Two ids free
//      on every member: the intercommunicator's and its hidden local
//      communicator's. No message of the handshake travels on a context, so
//      connections in sequence or at the same time, overlapping or not,
//      cannot take each other's traffic.
//
// All functions are collective as MPI says, hold the engine lock and return
// MPI error classes.
#pragma once

#include <string>
#include <vector>

#include "core/objects.h"
#include "pmi/dynamic.h"

namespace sonde::engine {

// MPI_Init: connects a spawned process's world to its parents (a no-op
// for processes not spawned by Sonde). Must run once after the engine is up.
int connect_to_parents();
// MPI_Comm_get_parent: the intercommunicator to the parents, or null.
Comm* parent_comm();

// For the snapshot handler (no allocation, no lock; call where the engine
// lock is held or no other thread is in MPI): engine peer ids
// world_size() .. connected_process_end()-1 are processes of other jobs
// this one is connected to; their PMIx namespace and rank. False for any
// other id.
bool connected_process(int id, const char** nspace, int* rank);
int connected_process_end();

// MPI_Comm_spawn(_multiple) over `comm` (intra): `apps` matter at `root`
// only. `errcodes`, if not null, gets one code per child (MPI_SUCCESS or
// MPI_ERR_SPAWN), sized at the root's total and filled on every process
// that passed it.
int spawn(Comm* comm, int root, const std::vector<dynamic::App>& apps, std::vector<int>* errcodes, Comm** out);

// Ports: a name unique to this process and call.
int open_port(std::string* port);
int close_port(const std::string& port);
int accept(const std::string& port, int root, Comm* comm, Comm** out);
int connect(const std::string& port, int root, Comm* comm, Comm** out);
int publish_name(const std::string& service, const std::string& port);
int unpublish_name(const std::string& service);
int lookup_name(const std::string& service, std::string* port);
// MPI_Comm_join: the two processes at the ends of socket `fd`.
int join(int fd, Comm** out);

}  // namespace sonde::engine
