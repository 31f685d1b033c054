// Building communicators: agreeing on context ids among a subset of a
// communicator or across the two groups of an intercommunicator, and the
// constructors shared by several MPI calls (dup, split).
//
// Context ids: every process keeps a bit set of ids it has free
// (Engine::free_contexts). A new communicator takes the lowest id free on
// all its members: each member's set is ANDed together (gathered to a
// leader, linear: construction is rare), the leader picks, everyone takes.
// A process takes part in one construction at a time, so two constructions
// never race for an id on a member they share. For an intercommunicator the
// two groups' leaders AND their groups' sets before picking.
//
// Internal traffic uses reserved negative tags (p2p.h) on the communicator
// the construction runs on, so it never matches user receives and tools can
// tell it apart.
//
// Callers hold the engine lock. Results are MPI error classes.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/info.h"
#include "engine/objects.h"

namespace sonde::engine {

// Tag kinds of this module (collective_tag(kind), p2p.h). 61/62 are the
// engine's own (split, context id).
inline constexpr int kTagKindCreateGroup = 63;   // MPI_Comm_create_group's agreement
inline constexpr int kTagKindInterLocal = 64;    // inside one group of an intercommunicator
inline constexpr int kTagKindInterLeaders = 65;  // between the two groups' leaders

// AND of the members' free-context sets at members[0]. `members` are ranks
// of `via`, `me` my index in it.
int reduce_free_mask(Comm* via, const std::vector<int>& members, int me, int tag, std::vector<uint64_t>& mask);
// members[0]'s vector to every member (lengths may differ beforehand).
int bcast_ints(Comm* via, const std::vector<int>& members, int me, int tag, std::vector<int>& v);
// Lowest id set in mask, or -1.
int lowest_free(const std::vector<uint64_t>& mask);
void take_context(uint32_t id);
void give_back_context(uint32_t id);
// A context id free on every member of `members`, taken on each.
int agree_context(Comm* via, const std::vector<int>& members, int me, int tag, uint32_t* out);
// A context id free on every process of both groups of `inter`, taken on each.
int agree_inter_context(Comm* inter, uint32_t* out);

// MPI_Comm_dup and friends on an intra- or intercommunicator: new context,
// propagated PERUSE handles, copied attributes (copy callbacks run), and the
// info hints (`info` if given, else the parent's).
int dup_comm(Comm* c, const InfoPairs* info, Comm** out);
// MPI_Comm_split on an intracommunicator; *out is null for MPI_UNDEFINED.
int split_comm(Comm* c, int color, int key, Comm** out);
// An intercommunicator over `remote` (world ranks), my rank `my_rank` in a
// local group of world ranks `local`, with hidden local intracomm `local_comm`.
int make_intercomm(Comm* parent, std::vector<int> local, std::vector<int> remote, int my_rank, uint32_t context,
                   Comm* local_comm, Comm** out);
// MPI_Comm_free's work: delete callbacks (newest first; an error keeps the
// communicator), then the communicator and, for an intercommunicator, its
// hidden local one.
int free_comm_checked(Comm* c);

}  // namespace sonde::engine
