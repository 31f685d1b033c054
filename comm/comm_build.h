// Building communicators: agreeing on context ids among a subset of a
// communicator or across the two groups of an intercommunicator, and the
// constructors shared by several MPI calls (dup, idup, split).
//
// Context ids: every process keeps a bit set of ids it has free
// (ContextRegistry in core/engine_parts.h). A new communicator takes the lowest id free on
// all its members: in one *round* each member offers a window of its free
// ids (context_window.h: a few words from its lowest free one, 256 ids in a
// first round), the offers are combined at a leader (their overlap ANDed;
// linear: construction is rare), the leader picks, every member takes the
// pick and gets the rest of its offer back. When the windows hold no common
// id, the next round starts above what was searched with a window twice as
// large, so members whose free sets differ (fragmented by frees, or one far
// ahead of another) still meet, in a few rounds of a few words each.
// While a round runs, its offer is out of the free set, so rounds in flight
// at the same time in one process -- a blocking construction progressing a
// nonblocking MPI_Comm_idup, idups on overlapping communicators, threads --
// never offer the same id twice. A round whose combination is empty while
// some member had ids out on another round (its offer is not complete) is
// repeated from the lowest ids; to make sure one of
// several idups in flight wins, a process offers its ids only to the idup
// with the smallest key (parent context id, sequence number) among its own,
// and an idup keeps its 64 lowest free ids back for blocking constructions
// (which other members may have to finish before they start the idup).
// Complete offers searched up to the end of the id space without a common
// id mean the 131072 ids are used up: MPI_ERR_NO_MEM, the standard's
// one class for a resource running out (MPI_ERR_INTERN would call it a
// fault of the library; freeing communicators recovers).
//
// Internal traffic uses reserved negative tags (p2p.h) on the communicator
// the construction runs on, so it never matches user receives and tools can
// tell it apart. Kinds stay below 64 and clear of the collectives' kinds
// (coll.h: tags -16 - kind - 64 * sequence).
//
// Callers hold the engine lock. Results are MPI error classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/info.h"
#include "core/objects.h"

namespace sonde::engine {

// Tag kinds of this module (collective_tag(kind), p2p.h). 61/62 are the
// engine's own (split, context id).
inline constexpr int kTagKindIdup = 57;          // MPI_Comm_idup (plus 64 * sequence)
inline constexpr int kTagKindCreateGroup = 58;   // MPI_Comm_create_group's agreement
inline constexpr int kTagKindInterLocal = 59;    // inside one group of an intercommunicator
inline constexpr int kTagKindInterLeaders = 60;  // between the two groups' leaders

// members[0]'s vector to every member (lengths may differ beforehand).
int bcast_ints(Comm* via, const std::vector<int>& members, int me, int tag, std::vector<int>& v);
// Two processes swap vectors of ints of any length (a leader with `peer`).
int swap_ints(Comm* via, int peer, int tag, const std::vector<int>& mine, std::vector<int>& theirs);
void take_context(uint32_t id);
void give_back_context(uint32_t id);

// Combines the group's AND (at its leader) with another group's; null for
// a single group. Used for intercommunicators.
using LeaderSwap = int (*)(void* arg, std::vector<uint64_t>& words);
// A context id free on every member of `members` (ranks of `via`, `me` my
// index, members[0] the leader), taken on each; rounds repeat as described
// above. With `swap`, the leaders also AND in the other group's offers.
int agree_context(Comm* via, const std::vector<int>& members, int me, int tag, uint32_t* out, LeaderSwap swap = nullptr,
                  void* swap_arg = nullptr);
// Members that share no communicator (the two groups of a dynamic-process
// connection, runtime/dynamic.h) agree through another channel, in the same
// rounds: `swap(arg, round, mine, others)` makes this member's offer of
// round `round` (0, 1, ...; context_window::offer_text) known to every
// other member and returns theirs of that round, every member's but this
// one's in any order. Every member ANDs the same offers, so each decides
// alone and all alike. `want` (1 or 2) ids free on every member go to
// out[0..want), taken on each. A malformed offer fails the agreement
// (MPI_ERR_OTHER); a swap's failure is its own class.
using OfferSwap = int (*)(void* arg, int round, const std::string& mine, std::vector<std::string>* others);
int agree_contexts_apart(OfferSwap swap, void* arg, int want, uint32_t* out);
// A context id free on every member of `parent`, taken on each (the
// agreement above over all of parent's ranks).
int allocate_context(Comm* parent, uint32_t* out);
// A context id free on every process of both groups of `inter`, taken on each.
int agree_inter_context(Comm* inter, uint32_t* out);

// MPI_Comm_idup(_with_info): starts the agreement and returns; the request
// completes (and *newcomm is written) when progress() has finished it.
// `info` null: the parent's hints. On an intercommunicator each group
// gathers its offers on its hidden local communicator and the two leaders
// swap their ANDs over the intercommunicator, as agree_inter_context does,
// picking two ids: the new intercommunicator's and its hidden local one's.
int start_idup(Comm* c, const InfoPairs* info, MPI_Comm* newcomm, Request* request);
// The idups in flight advance through a progress hook (core/progress_hooks.h).

// MPI_Comm_dup and friends on an intra- or intercommunicator: new context,
// propagated PERUSE handles, copied attributes (copy callbacks run), and the
// info hints (`info` if given, else the parent's).
int dup_comm(Comm* c, const InfoPairs* info, Comm** out);
// MPI_Comm_split on an intracommunicator; *out is null for MPI_UNDEFINED.
int split_comm(Comm* c, int color, int key, Comm** out);
// MPI_Comm_split on an intercommunicator; *out is null for MPI_UNDEFINED or
// when no remote process has my color.
int split_intercomm(Comm* c, int color, int key, Comm** out);
// MPI_Comm_create on an intercommunicator (MPI 4.1 7.4.2): `group` (world
// ranks) is my side's part, a subset of my local group given alike by all of
// it; the result joins it with the other side's part. *out is null for
// processes outside their side's part, and for everyone when either part is
// empty.
int create_intercomm(Comm* c, const std::vector<int>& group, Comm** out);
// An intercommunicator over `remote` (world ranks), my rank `my_rank` in a
// local group of world ranks `local`, with hidden local intracomm `local_comm`.
int make_intercomm(Comm* parent, std::vector<int> local, std::vector<int> remote, int my_rank, uint32_t context,
                   Comm* local_comm, Comm** out);
// MPI_Comm_free's work: delete callbacks (newest first; an error keeps the
// communicator), then the communicator and, for an intercommunicator, its
// hidden local one.
int free_comm_checked(Comm* c);

}  // namespace sonde::engine
