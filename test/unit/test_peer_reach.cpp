// How an origin reaches each process's window memory
// (ch4_netmod_rma/peer_memory/peer_reach.h), without MPI: every combination
// of facts for up to three ranks and random ones for many, against the
// decision as the glue made it before it moved here (three passes over the
// ranks: MPICH's segment, UCX's mappings, cross-memory attach), and the
// per-operation lookups.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "peer_reach.h"

namespace {

struct decision {
    std::vector<nbrma_mapped_peer_t> mapped;  // base NULL: not
    std::vector<uint64_t> pid;
    int n_cross_memory_peers = 0, n_mapped_peers = 0;
    bool all_peers_mapped = false;
};

// cross_memory_rma.c before the move (map_shared_segment, map_ucx_memory and
// the pid loop of MPIDI_NBRMA_cross_memory_rma_decide, then
// MPIDI_NBRMA_mapped_peers), on the same facts; since then UCX's mappings
// take puts and gets too, and count among the copies' peers.
decision old_glue(const std::vector<nbrma_peer_facts_t> &facts, int self, bool mapped_here)
{
    const int nprocs = static_cast<int>(facts.size());
    decision d;
    d.mapped.assign(nprocs, nbrma_mapped_peer_t{nullptr, 0});
    d.pid.assign(nprocs, 0);
    for (int rank = 0; rank < nprocs; rank++) {
        if (facts[rank].shared_base == nullptr)
            continue;
        d.mapped[rank].base = facts[rank].shared_base;
        d.mapped[rank].disp_unit = facts[rank].shared_disp_unit;
        d.n_cross_memory_peers += rank != self;
    }
    for (int rank = 0; rank < nprocs; rank++) {
        if (d.mapped[rank].base || (rank == self && !mapped_here) || !facts[rank].ucx_base)
            continue;
        d.mapped[rank] = nbrma_mapped_peer_t{facts[rank].ucx_base, facts[rank].ucx_disp_unit};
    }
    for (int rank = 0; rank < nprocs; rank++)
        d.n_cross_memory_peers += rank != self && !facts[rank].shared_base && facts[rank].ucx_base;
    for (int peer = 0; peer < nprocs; peer++) {
        if (facts[peer].pid == 0 || !facts[peer].has_key || d.mapped[peer].base)
            continue;
        if (facts[peer].ucx_base)
            continue;  // UCX's shared-memory lanes reach it directly
        d.pid[peer] = facts[peer].pid;
        d.n_cross_memory_peers++;
    }
    for (int rank = 0; rank < nprocs; rank++)
        d.n_mapped_peers += rank != self && d.mapped[rank].base != nullptr;
    d.all_peers_mapped = nprocs > 1 && d.n_mapped_peers == nprocs - 1;
    return d;
}

void expect_same(const nbrma_peer_reach_t &r, const decision &d, int self)
{
    const int nprocs = static_cast<int>(d.pid.size());
    bool any_mapped = false, any_pid = false;
    for (int rank = 0; rank < nprocs; rank++) {
        const nbrma_mapped_peer_t none = {nullptr, 0};
        const nbrma_mapped_peer_t &got = r.mapped ? r.mapped[rank] : none;
        const nbrma_mapped_peer_t &want = d.mapped[rank];
        ASSERT_EQ(got.base, want.base) << "rank " << rank;
        if (want.base)
            ASSERT_EQ(got.disp_unit, want.disp_unit) << "rank " << rank;
        ASSERT_EQ(nbrma_peer_reach_pid(&r, rank), d.pid[rank]) << "rank " << rank;
        any_mapped = any_mapped || want.base;
        any_pid = any_pid || d.pid[rank];
        // the lookups of every operation
        char *copy = nbrma_peer_reach_copy_target(&r, rank, self, 3);
        char *atomics = nbrma_peer_reach_atomics_target(&r, rank, 3);
        ASSERT_EQ(atomics, want.base ? want.base + 3 * want.disp_unit : nullptr);
        ASSERT_EQ(copy, rank != self ? atomics : nullptr);
    }
    ASSERT_EQ(r.n_cross_memory_peers, d.n_cross_memory_peers);
    ASSERT_EQ(r.n_mapped_peers, d.n_mapped_peers);
    ASSERT_EQ(r.all_peers_mapped, d.all_peers_mapped);
    ASSERT_EQ(r.mapped != nullptr, any_mapped) << "the table only where it holds an entry";
    ASSERT_EQ(r.pid != nullptr, any_pid);
}

char segment_memory[16][64], ucx_memory[16][64];

// One rank's facts from 5 bits: in MPICH's segment, mapped by UCX, a key, a
// pid (UCX's mapping without a key cannot happen; tried anyway).
nbrma_peer_facts_t facts_of(unsigned bits, int rank)
{
    nbrma_peer_facts_t f = {};
    if (bits & 1) {
        f.shared_base = segment_memory[rank % 16];
        f.shared_disp_unit = 1 + rank % 4;
    }
    if (bits & 2) {
        f.ucx_base = ucx_memory[rank % 16];
        f.ucx_disp_unit = 8;
    }
    f.has_key = bits & 4;
    f.pid = bits & 8 ? 1000 + rank : 0;
    return f;
}

}  // namespace

TEST(peer_reach, every_combination_for_up_to_three_ranks_as_before)
{
    int cases = 0;
    for (int nprocs = 1; nprocs <= 3; nprocs++) {
        unsigned combos = 1;
        for (int r = 0; r < nprocs; r++)
            combos *= 16;
        for (unsigned c = 0; c < combos; c++)
            for (int self = 0; self < nprocs; self++)
                for (bool mapped_here : {false, true}) {
                    std::vector<nbrma_peer_facts_t> facts;
                    for (int r = 0, bits = c; r < nprocs; r++, bits /= 16)
                        facts.push_back(facts_of(bits % 16, r));
                    nbrma_peer_reach_t reach;
                    ASSERT_EQ(nbrma_peer_reach_decide(facts.data(), nprocs, self, mapped_here,
                                                      &reach),
                              0);
                    expect_same(reach, old_glue(facts, self, mapped_here), self);
                    nbrma_peer_reach_free(&reach);
                    if (HasFatalFailure()) {
                        ADD_FAILURE() << nprocs << " ranks, facts " << c << ", self " << self
                                      << ", mapped_here " << mapped_here;
                        return;
                    }
                    cases++;
                }
    }
    EXPECT_EQ(cases, 2 * (16 + 2 * 256 + 3 * 4096));
}

TEST(peer_reach, random_windows_of_many_ranks_as_before)
{
    std::mt19937 rng(51);
    for (int round = 0; round < 3000; round++) {
        const int nprocs = 1 + static_cast<int>(rng() % 64);
        const int self = static_cast<int>(rng() % nprocs);
        const bool mapped_here = rng() % 2;
        // windows as they come: a node's segment for all or none, UCX
        // mappings for some, pids for the rest
        const unsigned style = rng() % 4;
        std::vector<nbrma_peer_facts_t> facts;
        for (int r = 0; r < nprocs; r++) {
            unsigned bits = rng() % 16;
            if (style == 0)
                bits |= 1;
            else if (style == 1)
                bits &= ~1u;
            else if (style == 2)
                bits = r == self ? bits & ~8u : bits | 4;
            facts.push_back(facts_of(bits, r));
        }
        nbrma_peer_reach_t reach;
        ASSERT_EQ(nbrma_peer_reach_decide(facts.data(), nprocs, self, mapped_here, &reach), 0);
        expect_same(reach, old_glue(facts, self, mapped_here), self);
        nbrma_peer_reach_free(&reach);
        ASSERT_FALSE(HasFatalFailure()) << "round " << round;
    }
}

// Windows as MPI makes them, spelled out.
TEST(peer_reach, windows_as_mpi_makes_them)
{
    // MPI_Win_allocate_shared on 3 processes: everyone's memory in the
    // segment, this process's own too; copies go to the peers
    std::vector<nbrma_peer_facts_t> shared(3);
    for (int r = 0; r < 3; r++)
        shared[r] = facts_of(1, r);
    nbrma_peer_reach_t reach;
    ASSERT_EQ(nbrma_peer_reach_decide(shared.data(), 3, 1, true, &reach), 0);
    EXPECT_EQ(reach.n_cross_memory_peers, 2);
    EXPECT_EQ(reach.n_mapped_peers, 2);
    EXPECT_TRUE(reach.all_peers_mapped);
    EXPECT_EQ(reach.pid, nullptr);
    EXPECT_EQ(nbrma_peer_reach_copy_target(&reach, 1, 1, 0), nullptr) << "not to itself";
    EXPECT_EQ(nbrma_peer_reach_atomics_target(&reach, 1, 2), segment_memory[1] + 2 * 2)
        << "its own accumulates take the CPU's atomics too";
    EXPECT_EQ(nbrma_peer_reach_copy_target(&reach, 2, 1, 5), segment_memory[2] + 5 * 3);
    nbrma_peer_reach_free(&reach);
    EXPECT_EQ(reach.mapped, nullptr);
    EXPECT_EQ(reach.n_cross_memory_peers, 0);

    // MPI_Win_allocate in UCX memory on 2 processes of one host: mapped for
    // puts, gets and accumulates; this process's own where peers may map it
    std::vector<nbrma_peer_facts_t> ucx = {facts_of(2 | 4, 0), facts_of(2 | 4 | 8, 1)};
    ASSERT_EQ(nbrma_peer_reach_decide(ucx.data(), 2, 0, false, &reach), 0);
    EXPECT_EQ(reach.n_cross_memory_peers, 1);
    EXPECT_TRUE(reach.all_peers_mapped);
    EXPECT_EQ(nbrma_peer_reach_copy_target(&reach, 1, 0, 2), ucx_memory[1] + 16);
    EXPECT_EQ(nbrma_peer_reach_copy_target(&reach, 0, 0, 0), nullptr) << "not to itself";
    EXPECT_EQ(nbrma_peer_reach_atomics_target(&reach, 1, 1), ucx_memory[1] + 8);
    EXPECT_EQ(nbrma_peer_reach_atomics_target(&reach, 0, 0), nullptr) << "not mapped_here";
    EXPECT_EQ(nbrma_peer_reach_pid(&reach, 1), 0u) << "UCX maps it";
    nbrma_peer_reach_free(&reach);
    ASSERT_EQ(nbrma_peer_reach_decide(ucx.data(), 2, 0, true, &reach), 0);
    EXPECT_EQ(nbrma_peer_reach_atomics_target(&reach, 0, 0), ucx_memory[0]);
    nbrma_peer_reach_free(&reach);

    // MPI_Win_create over malloc'ed memory on 3 processes, two of this host:
    // cross-memory attach to the one with a pid and a key
    std::vector<nbrma_peer_facts_t> created = {facts_of(4, 0), facts_of(4 | 8, 1),
                                               facts_of(4, 2)};
    ASSERT_EQ(nbrma_peer_reach_decide(created.data(), 3, 0, false, &reach), 0);
    EXPECT_EQ(reach.mapped, nullptr);
    EXPECT_EQ(reach.n_cross_memory_peers, 1);
    EXPECT_EQ(nbrma_peer_reach_pid(&reach, 1), 1001u);
    EXPECT_EQ(nbrma_peer_reach_pid(&reach, 2), 0u);
    EXPECT_FALSE(reach.all_peers_mapped);
    nbrma_peer_reach_free(&reach);

    // one process: nobody else to map
    std::vector<nbrma_peer_facts_t> alone = {facts_of(1, 0)};
    ASSERT_EQ(nbrma_peer_reach_decide(alone.data(), 1, 0, true, &reach), 0);
    EXPECT_FALSE(reach.all_peers_mapped);
    EXPECT_EQ(reach.n_mapped_peers, 0);
    nbrma_peer_reach_free(&reach);

    // nothing known: all zero, the lookups answer none
    std::vector<nbrma_peer_facts_t> nothing(4);
    ASSERT_EQ(nbrma_peer_reach_decide(nothing.data(), 4, 2, true, &reach), 0);
    EXPECT_EQ(reach.mapped, nullptr);
    EXPECT_EQ(reach.pid, nullptr);
    EXPECT_EQ(reach.n_cross_memory_peers + reach.n_mapped_peers, 0);
    EXPECT_EQ(nbrma_peer_reach_pid(&reach, 3), 0u);
    EXPECT_EQ(nbrma_peer_reach_atomics_target(&reach, 3, 0), nullptr);
    nbrma_peer_reach_free(&reach);
    const nbrma_peer_reach_t zero = {};
    EXPECT_EQ(nbrma_peer_reach_copy_target(&zero, 0, 1, 0), nullptr) << "a window that wants none";
}
