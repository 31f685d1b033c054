// Helpers shared by the ofi transport tests: a transport on the ranks of
// an in-memory exchange (tests/transports/shm_fixture.h), what libfabric
// offers, and the small protocols the tests open with.
#pragma once

#include <memory>
#include <string>

#include "tests/transports/shm_fixture.h"
#include "transports/ofi/ofi_transport.h"

namespace sonde::test {

// An ofi transport for this rank of `ex`, talking to every other rank, its
// fatal errors thrown as RankFailure.
std::unique_ptr<transport::Transport> make_ofi(FakeExchange& ex, const std::string& provider, int credits = 8,
                                               int tx_buffers = 64, size_t frame = 64 * 1024);

// Does libfabric offer an FI_EP_RDM endpoint by provider `name` (exactly)?
bool libfabric_has_rdm(const char* name);

// The provider name the transport must have picked when asked for `asked`:
// "tcp" means TCP's native RDM endpoint where libfabric has one ("net" in
// 1.17, "tcp" itself from 1.18), else ofi_rxm over tcp.
std::string expected_provider(const std::string& asked);

// What MPI_Finalize does before its fence: progress until the transport is
// drained or nothing moves for 2 s (a peer already in the fence does not
// acknowledge, but has everything it needs).
void settle(transport::Transport& ofi, transport::Delivery& in);

// Rank 0 sends a packet and rank 1 answers it: the two have talked, so
// each watches the other. Two ranks.
void greet(FakeExchange& ex, Endpoint& ofi, CheckingDelivery& in);

}  // namespace sonde::test
