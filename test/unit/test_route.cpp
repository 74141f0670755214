// The routing rules of RMA operations and the ordering step before an ordered
// one (core/include/nbrma_route.h, rules R1-R8 and O1 of core/src/route.cpp),
// without MPI: every combination of facts against the rules written out, and
// a simulator of one origin's ordered operations toward one target over a
// transport that reorders what nothing orders (UCX operations among
// themselves without a fence, active messages against everything), which
// checks that the target performs them in issue order. The same simulator
// with a weakened step (no fence) must find a reordering: the proof that its
// check can fail.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "nbrma_route.h"

namespace {

nbrma_op_facts facts_from_bits(unsigned bits)
{
    nbrma_op_facts f = {};
    f.put_or_get = bits & 1;
    f.to_self = bits & 2;
    f.cross_memory_fits = bits & 4;
    f.ucx_atomics_fit = bits & 8;
    f.narrow_atomics_fit = bits & 16;
    f.may_wait = bits & 32;
    f.mpich_sends_am = bits & 64;
    f.mapped_atomics_fit = bits & 128;
    f.emulated_over_network = bits & 256;
    f.fits_one_message = bits & 512;
    f.many_elements = bits & 1024;
    f.small_unmapped_copy = bits & 2048;
    f.target_served_by_agent = bits & 4096;
    f.local_completion_asked = bits & 8192;
    f.in_message_stream = bits & 16384;
    f.slow_system_call_copy = bits & 32768;
    f.notified = bits & 65536;
    return f;
}

const unsigned all_facts = 131072;

TEST(route, every_combination_of_facts_follows_the_rules)
{
    for (unsigned bits = 0; bits < all_facts; bits++) {
        nbrma_op_facts f = facts_from_bits(bits);
        nbrma_route r = nbrma_route_of(&f);
        SCOPED_TRACE(bits);
        if (f.put_or_get && f.cross_memory_fits &&
            (f.notified ||
             !((f.small_unmapped_copy && f.local_completion_asked) ||
               (f.slow_system_call_copy && !f.emulated_over_network)) ||
             f.target_served_by_agent)) {                                        // R1
            EXPECT_EQ(r.path, NBRMA_PATH_CROSS_MEMORY);
            EXPECT_EQ(r.travels, NBRMA_WAY_UNFENCED);  // a CPU copy: nothing orders it
            EXPECT_EQ(r.leaves, NBRMA_WAY_NONE);    // done when the call returns
        } else if (!f.put_or_get && f.ucx_atomics_fit && !f.emulated_over_network &&
                   !(f.many_elements && f.mapped_atomics_fit)) {        // R2
            EXPECT_EQ(r.path, NBRMA_PATH_UCX_ATOMICS);
            EXPECT_EQ(r.travels, NBRMA_WAY_UCX);
            EXPECT_EQ(r.leaves, NBRMA_WAY_UCX);
        } else if (!f.put_or_get && f.narrow_atomics_fit && f.may_wait) {  // R2, narrow
            EXPECT_EQ(r.path, NBRMA_PATH_NARROW_ATOMICS);
            EXPECT_EQ(r.travels, NBRMA_WAY_UCX);    // compare-and-swap on the endpoint
            EXPECT_EQ(r.leaves, NBRMA_WAY_NONE);    // its answers were awaited
        } else if (!f.put_or_get && f.mapped_atomics_fit) {             // R3
            EXPECT_EQ(r.path, NBRMA_PATH_MAPPED_ATOMICS);
            EXPECT_EQ(r.travels, NBRMA_WAY_UNFENCED);  // the CPU's: no fence orders it
            EXPECT_EQ(r.leaves, NBRMA_WAY_NONE);    // done when the call returns
        } else if (f.put_or_get && f.emulated_over_network && f.fits_one_message &&
                   !f.to_self && !f.in_message_stream) {  // R8
            EXPECT_EQ(r.path, NBRMA_PATH_MPICH_MESSAGE);
            EXPECT_EQ(r.travels, NBRMA_WAY_UNFENCED);  // MPICH's active message
            EXPECT_EQ(r.leaves, NBRMA_WAY_UNFENCED);
        } else {                                                        // R4
            EXPECT_EQ(r.path, NBRMA_PATH_MPICH);
            nbrma_way way = f.to_self || f.mpich_sends_am ? NBRMA_WAY_UNFENCED : NBRMA_WAY_UCX;
            EXPECT_EQ(r.travels, way);
            EXPECT_EQ(r.leaves, way);
        }
    }
}

TEST(route, complete_at_local_only_ahead_of_a_notice_and_without_a_remote_request)
{
    for (unsigned bits = 0; bits < all_facts; bits++) {
        nbrma_op_facts f = facts_from_bits(bits);
        nbrma_route r = nbrma_route_of(&f);
        // only MPICH's active messages to another process share the channel
        // of the window's protocol messages
        bool by_active_message = (r.path == NBRMA_PATH_MPICH && f.mpich_sends_am && !f.to_self) ||
            r.path == NBRMA_PATH_MPICH_MESSAGE;
        for (bool notice : {false, true})
            for (bool remote_request : {false, true}) {
                SCOPED_TRACE(bits);
                EXPECT_EQ(nbrma_complete_at_local(r, f.to_self, notice, remote_request),  // R5
                          by_active_message && notice && !remote_request);
            }
    }
    // UCX's RDMA and atomics are not ordered against active messages: never
    nbrma_op_facts put = {};
    put.put_or_get = true;
    EXPECT_FALSE(nbrma_complete_at_local(nbrma_route_of(&put), false, true, false));
    nbrma_op_facts acc = {};
    acc.mpich_sends_am = true;
    EXPECT_TRUE(nbrma_complete_at_local(nbrma_route_of(&acc), false, true, false));
    acc.to_self = true;     // the loopback: not the channel of the notice
    EXPECT_FALSE(nbrma_complete_at_local(nbrma_route_of(&acc), true, true, false));
}

// R2: an atomic that UCX would have the target's CPU answer across a network
// (tcp) keeps MPICH's path, an active message the target's CPU serves anyway;
// where UCX's atomics are the origin's own (shared memory, a NIC's) they go
// first, as before.
TEST(route, atomics_that_ucx_emulates_over_a_network_keep_mpichs_message)
{
    nbrma_op_facts acc = {};
    acc.ucx_atomics_fit = acc.mpich_sends_am = acc.may_wait = true;
    EXPECT_EQ(nbrma_route_of(&acc).path, NBRMA_PATH_UCX_ATOMICS);
    acc.emulated_over_network = true;
    nbrma_route r = nbrma_route_of(&acc);
    EXPECT_EQ(r.path, NBRMA_PATH_MPICH);
    EXPECT_EQ(r.travels, NBRMA_WAY_UNFENCED);   // ordered as an active message
    EXPECT_EQ(r.leaves, NBRMA_WAY_UNFENCED);
    // a put or get is not an atomic: R8 decides for those
    nbrma_op_facts put = acc;
    put.put_or_get = true;
    EXPECT_NE(nbrma_route_of(&put).path, NBRMA_PATH_UCX_ATOMICS);
}

// R2: an accumulate of many elements goes to the CPU's atomics where they
// reach the target's memory (one UCX call per element costs more); with few
// elements, or where the memory is not mapped here, UCX's atomics as before.
TEST(route, many_elements_take_the_cpus_atomics_where_they_reach)
{
    nbrma_op_facts acc = {};
    acc.ucx_atomics_fit = acc.mapped_atomics_fit = acc.may_wait = true;
    EXPECT_EQ(nbrma_route_of(&acc).path, NBRMA_PATH_UCX_ATOMICS);
    acc.many_elements = true;
    nbrma_route r = nbrma_route_of(&acc);
    EXPECT_EQ(r.path, NBRMA_PATH_MAPPED_ATOMICS);
    EXPECT_EQ(r.leaves, NBRMA_WAY_NONE);    // performed when its call returns
    acc.mapped_atomics_fit = false;
    EXPECT_EQ(nbrma_route_of(&acc).path, NBRMA_PATH_UCX_ATOMICS);
}

// R8: a small put or get that UCX would have the target's CPU perform anyway
// goes as MPICH's active message, complete at its local completion where its
// epoch ends by a notice (R5) and otherwise with MPICH's acknowledgement;
// anywhere else it keeps UCX's path.
TEST(route, a_put_the_target_serves_anyway_goes_as_a_message)
{
    nbrma_op_facts put = {};
    put.put_or_get = true;
    put.emulated_over_network = put.fits_one_message = true;
    nbrma_route r = nbrma_route_of(&put);
    EXPECT_EQ(r.path, NBRMA_PATH_MPICH_MESSAGE);
    EXPECT_EQ(r.leaves, NBRMA_WAY_UNFENCED) << "no endpoint flush";
    EXPECT_TRUE(nbrma_complete_at_local(r, false, true, false)) << "ahead of a notice";
    EXPECT_FALSE(nbrma_complete_at_local(r, false, false, false)) << "a lock, a fence";
    EXPECT_FALSE(nbrma_complete_at_local(r, false, true, true)) << "a request waits";
    // a put whose window asked for local completion too: MPICH's message is
    // locally complete once sent (patch 0045), as UCX's emulated put
    nbrma_op_facts local = put;
    local.local_completion_asked = true;
    EXPECT_EQ(nbrma_route_of(&local).path, NBRMA_PATH_MPICH_MESSAGE);
    // RDMA that needs no target CPU (shared memory UCX maps), a large put:
    // UCX's put, remote completion; a stream: the target's CPU answers UCX's
    // puts together at the flush
    for (int missing = 0; missing < 3; missing++) {
        nbrma_op_facts f = put;
        if (missing == 2)
            f.in_message_stream = true;
        else
            (missing == 0 ? f.emulated_over_network : f.fits_one_message) = false;
        r = nbrma_route_of(&f);
        EXPECT_EQ(r.path, NBRMA_PATH_MPICH);
        EXPECT_EQ(r.leaves, NBRMA_WAY_UCX);
        EXPECT_FALSE(nbrma_complete_at_local(r, false, true, false));
    }
    // a copy the origin's CPU makes comes first (R1), the caller itself never
    nbrma_op_facts copy = put;
    copy.cross_memory_fits = true;
    EXPECT_EQ(nbrma_route_of(&copy).path, NBRMA_PATH_CROSS_MEMORY);
    nbrma_op_facts self = put;
    self.to_self = true;
    EXPECT_EQ(nbrma_route_of(&self).path, NBRMA_PATH_MPICH);
}

// R8's stream, one rule for the grant cache's count and the engine's: `max`
// since the last completion, or more than `max` in the interval before.
TEST(route, a_message_stream_is_max_now_or_more_before)
{
    EXPECT_FALSE(nbrma_message_stream(0, 0, 8));
    EXPECT_FALSE(nbrma_message_stream(7, 8, 8)) << "under max now, max before";
    EXPECT_TRUE(nbrma_message_stream(8, 0, 8)) << "max now";
    EXPECT_TRUE(nbrma_message_stream(0, 9, 8)) << "more than max before";
    EXPECT_TRUE(nbrma_message_stream(0, 0, 0)) << "0: always";
}

// R1 toward window memory not mapped here: a copy below the window's
// threshold (a system call) keeps UCX's path only where it is a put whose
// local completion is asked (UCX's emulated put gives the buffer back sooner)
// and the target's application serves it; a get, a put whose window never
// asked for local completion, and any copy the target's progress agent alone
// serves take the origin's copy, as a larger one does.
TEST(route, a_small_unmapped_copy_keeps_ucx_only_for_a_put_whose_local_completion_is_asked)
{
    nbrma_op_facts small = {};
    small.put_or_get = true;
    small.cross_memory_fits = true;
    small.small_unmapped_copy = true;
    small.local_completion_asked = true;
    EXPECT_EQ(nbrma_route_of(&small).path, NBRMA_PATH_MPICH);
    small.target_served_by_agent = true;
    nbrma_route r = nbrma_route_of(&small);
    EXPECT_EQ(r.path, NBRMA_PATH_CROSS_MEMORY);
    EXPECT_TRUE(nbrma_performed_at_return(r));
    // served by the agent or not, a copy the path may not make stays MPICH's
    small.cross_memory_fits = false;
    EXPECT_EQ(nbrma_route_of(&small).path, NBRMA_PATH_MPICH);
    // a get, or a put whose window asked for no local completion
    nbrma_op_facts get = {};
    get.put_or_get = true;
    get.cross_memory_fits = true;
    get.small_unmapped_copy = true;
    EXPECT_EQ(nbrma_route_of(&get).path, NBRMA_PATH_CROSS_MEMORY);
    nbrma_op_facts large = {};
    large.put_or_get = true;
    large.cross_memory_fits = true;
    large.local_completion_asked = true;
    EXPECT_EQ(nbrma_route_of(&large).path, NBRMA_PATH_CROSS_MEMORY);
}

// R1 where the system call is slow: every copy toward unmapped memory, a get,
// a put whose window asked for no local completion and a large one too,
// keeps UCX's path while the target's application serves it, where that path
// is shared memory; one its progress agent alone serves, or toward a target
// UCX reaches over tcp only, takes the origin's copy still.
TEST(route, a_slow_system_call_keeps_every_unmapped_copy_on_ucx_over_shared_memory)
{
    nbrma_op_facts get = {};
    get.put_or_get = true;
    get.cross_memory_fits = true;
    get.slow_system_call_copy = true;
    EXPECT_TRUE(nbrma_copy_sooner_by_ucx(&get));
    EXPECT_EQ(nbrma_route_of(&get).path, NBRMA_PATH_MPICH);
    get.target_served_by_agent = true;
    EXPECT_EQ(nbrma_route_of(&get).path, NBRMA_PATH_CROSS_MEMORY);
    get.target_served_by_agent = false;
    get.emulated_over_network = true;
    EXPECT_FALSE(nbrma_copy_sooner_by_ucx(&get));
    EXPECT_EQ(nbrma_route_of(&get).path, NBRMA_PATH_CROSS_MEMORY);
    // a notified one: its increment follows the copy at once (R6)
    nbrma_op_facts notified = {};
    notified.put_or_get = true;
    notified.cross_memory_fits = true;
    notified.slow_system_call_copy = true;
    notified.small_unmapped_copy = true;
    notified.local_completion_asked = true;
    notified.notified = true;
    EXPECT_FALSE(nbrma_copy_sooner_by_ucx(&notified));
    EXPECT_EQ(nbrma_route_of(&notified).path, NBRMA_PATH_CROSS_MEMORY);
    nbrma_op_facts mapped = {};         // a copy by loads and stores
    mapped.put_or_get = true;
    mapped.cross_memory_fits = true;
    EXPECT_EQ(nbrma_route_of(&mapped).path, NBRMA_PATH_CROSS_MEMORY);
}

// R7: every combination of facts. The increment goes inside the put's or
// get's active message only on MPICH's path toward another process, where R6
// does not hold, for contiguous data, and where the operation needs the
// target's CPU anyway (an active message, or RDMA over tcp); the route then
// says active message.
TEST(route, a_notice_goes_inside_the_put_only_where_the_target_cpu_applies_the_put_anyway)
{
    for (unsigned bits = 0; bits < 256; bits++)
        for (unsigned more = 0; more < 8; more++) {
            SCOPED_TRACE(bits * 8 + more);
            nbrma_op_facts f = facts_from_bits(bits);
            const bool synchronous = more & 1, contiguous = more & 2, emulated = more & 4;
            const nbrma_route before = nbrma_route_of(&f);
            nbrma_route r = before;
            const bool rides = nbrma_notice_rides(r, f.to_self, synchronous);
            const bool expected = !f.to_self && !rides && contiguous && before.path == NBRMA_PATH_MPICH &&
                (before.leaves == NBRMA_WAY_UNFENCED || emulated);
            EXPECT_EQ(nbrma_notice_in_message(&r, f.to_self, rides, contiguous, emulated), expected);
            if (expected) {
                EXPECT_EQ(r.path, NBRMA_PATH_MPICH);
                EXPECT_EQ(r.travels, NBRMA_WAY_UNFENCED);
                EXPECT_EQ(r.leaves, NBRMA_WAY_UNFENCED);
            } else {
                EXPECT_EQ(r.path, before.path);
                EXPECT_EQ(r.travels, before.travels);
                EXPECT_EQ(r.leaves, before.leaves);
            }
        }
    // a put by UCX RDMA over tcp: inside the message; on a network whose RDMA
    // needs no target CPU: not
    nbrma_op_facts put = {};
    put.put_or_get = true;
    nbrma_route r = nbrma_route_of(&put);
    EXPECT_TRUE(nbrma_notice_in_message(&r, false, false, true, true));
    r = nbrma_route_of(&put);
    EXPECT_FALSE(nbrma_notice_in_message(&r, false, false, true, false));
}

// R10: every combination of facts: performed at return exactly where the
// route leaves nothing in flight, which the origin's own copies and atomics
// do and MPICH's and UCX's paths never do.
TEST(route, performed_at_return_only_where_the_route_leaves_nothing_in_flight)
{
    for (unsigned bits = 0; bits < all_facts; bits++) {
        SCOPED_TRACE(bits);
        const nbrma_op_facts f = facts_from_bits(bits);
        const nbrma_route r = nbrma_route_of(&f);
        const bool origin_alone = r.path == NBRMA_PATH_CROSS_MEMORY ||
            r.path == NBRMA_PATH_MAPPED_ATOMICS || r.path == NBRMA_PATH_NARROW_ATOMICS;
        EXPECT_EQ(nbrma_performed_at_return(r), origin_alone);
        EXPECT_EQ(nbrma_performed_at_return(r), r.leaves == NBRMA_WAY_NONE);
        if (nbrma_performed_at_return(r))
            EXPECT_FALSE(nbrma_needs_endpoint_flush(r, true, false));
    }
}

TEST(route, a_notice_rides_behind_the_data_only_where_nothing_overtakes_it)
{
    for (unsigned bits = 0; bits < all_facts; bits++) {
        nbrma_op_facts f = facts_from_bits(bits);
        nbrma_route r = nbrma_route_of(&f);
        for (bool synchronous : {false, true}) {
            SCOPED_TRACE(bits);
            bool done_at_return = r.leaves == NBRMA_WAY_NONE;
            bool by_ucx = r.leaves == NBRMA_WAY_UCX;
            EXPECT_EQ(nbrma_notice_rides(r, f.to_self, synchronous),  // R6
                      !f.to_self && (done_at_return || (by_ucx && synchronous)));
        }
    }
    // a put by UCX RDMA: behind it on shared memory, not over a network lane
    nbrma_op_facts put = {};
    put.put_or_get = true;
    EXPECT_TRUE(nbrma_notice_rides(nbrma_route_of(&put), false, true));
    EXPECT_FALSE(nbrma_notice_rides(nbrma_route_of(&put), false, false));
    // a cross-memory copy is done when its call returns, whatever the lanes
    put.cross_memory_fits = true;
    EXPECT_TRUE(nbrma_notice_rides(nbrma_route_of(&put), false, false));
    // an active message is applied by the target's CPU, whenever it comes
    nbrma_op_facts acc = {};
    acc.mpich_sends_am = true;
    EXPECT_FALSE(nbrma_notice_rides(nbrma_route_of(&acc), false, true));
    // toward the caller itself: the counters of this process take no atomic
    nbrma_op_facts self = {};
    self.put_or_get = true;
    self.to_self = true;
    EXPECT_FALSE(nbrma_notice_rides(nbrma_route_of(&self), true, true));
}

TEST(route, only_what_ucx_may_still_be_performing_needs_an_endpoint_flush)
{
    for (unsigned bits = 0; bits < all_facts; bits++) {
        nbrma_op_facts f = facts_from_bits(bits);
        nbrma_route r = nbrma_route_of(&f);
        for (bool local : {false, true})
            for (bool by_cpu : {false, true}) {
                SCOPED_TRACE(bits);
                EXPECT_EQ(nbrma_needs_endpoint_flush(r, local, by_cpu),  // R9
                          r.leaves == NBRMA_WAY_UCX && !(local && by_cpu));
            }
    }
    // a put by UCX RDMA: its transfer done at return into mapped shared
    // memory needs none; still in flight, over a network lane or into
    // memory UCX does not map here (emulated by messages), it does
    nbrma_op_facts put = {};
    put.put_or_get = true;
    nbrma_route r = nbrma_route_of(&put);
    EXPECT_FALSE(nbrma_needs_endpoint_flush(r, true, true));
    EXPECT_TRUE(nbrma_needs_endpoint_flush(r, false, true));
    EXPECT_TRUE(nbrma_needs_endpoint_flush(r, true, false));
    // an active message completes through MPICH's counters, never a flush
    nbrma_op_facts acc = {};
    acc.mpich_sends_am = true;
    EXPECT_FALSE(nbrma_needs_endpoint_flush(nbrma_route_of(&acc), false, false));
    // UCX's atomics: their answers come back through UCX
    nbrma_op_facts amo = {};
    amo.ucx_atomics_fit = true;
    EXPECT_TRUE(nbrma_needs_endpoint_flush(nbrma_route_of(&amo), false, true));
}

// P10's rings: only an operation that the target's CPU may have to perform
// wakes a target whose agent sleeps away: not the origin's copies or its
// CPU's atomics on mapped memory, nor MPICH's put or get by UCX into memory
// that UCX maps here (every lane this CPU's copy); MPICH's active messages,
// UCX's atomics and puts over other lanes may.
TEST(route, only_what_the_target_s_cpu_may_perform_wants_it)
{
    for (unsigned bits = 0; bits < all_facts; bits++) {
        nbrma_op_facts f = facts_from_bits(bits);
        nbrma_route r = nbrma_route_of(&f);
        for (bool by_cpu : {false, true}) {
            SCOPED_TRACE(bits);
            const bool origin_cpu = r.path == NBRMA_PATH_CROSS_MEMORY || r.path == NBRMA_PATH_MAPPED_ATOMICS;
            const bool copied = r.path == NBRMA_PATH_MPICH && r.leaves == NBRMA_WAY_UCX && by_cpu;
            EXPECT_EQ(nbrma_route_may_need_target_cpu(r, by_cpu), !origin_cpu && !copied);
        }
    }
    nbrma_op_facts put = {};
    put.put_or_get = true;
    EXPECT_FALSE(nbrma_route_may_need_target_cpu(nbrma_route_of(&put), true));
    EXPECT_TRUE(nbrma_route_may_need_target_cpu(nbrma_route_of(&put), false));
    nbrma_op_facts am_put = put;
    am_put.mpich_sends_am = true;
    EXPECT_TRUE(nbrma_route_may_need_target_cpu(nbrma_route_of(&am_put), true));
    nbrma_op_facts amo = {};
    amo.ucx_atomics_fit = true;
    EXPECT_TRUE(nbrma_route_may_need_target_cpu(nbrma_route_of(&amo), true));
    nbrma_op_facts copy = put;
    copy.cross_memory_fits = true;
    EXPECT_FALSE(nbrma_route_may_need_target_cpu(nbrma_route_of(&copy), false));
}

TEST(route, facts_of_the_other_family_change_nothing)
{
    // a put never takes an atomics path, an accumulate never the copy
    nbrma_op_facts put = {};
    put.put_or_get = true;
    put.ucx_atomics_fit = put.narrow_atomics_fit = put.may_wait = true;
    EXPECT_EQ(nbrma_route_of(&put).path, NBRMA_PATH_MPICH);
    nbrma_op_facts acc = {};
    acc.cross_memory_fits = true;
    EXPECT_EQ(nbrma_route_of(&acc).path, NBRMA_PATH_MPICH);
}

TEST(route, a_replay_never_takes_the_waiting_narrow_path)
{
    nbrma_op_facts f = {};
    f.narrow_atomics_fit = true;
    f.mpich_sends_am = true;
    EXPECT_EQ(nbrma_route_of(&f).path, NBRMA_PATH_MPICH);
    EXPECT_EQ(nbrma_route_of(&f).travels, NBRMA_WAY_UNFENCED);
    f.may_wait = true;
    EXPECT_EQ(nbrma_route_of(&f).path, NBRMA_PATH_NARROW_ATOMICS);
}

TEST(order_step, only_ucx_behind_ucx_alone_is_fenced)
{
    const unsigned none = NBRMA_WAY_NONE, ucx = NBRMA_WAY_UCX, unfenced = NBRMA_WAY_UNFENCED;
    for (nbrma_way w : {NBRMA_WAY_UCX, NBRMA_WAY_UNFENCED})
        EXPECT_EQ(nbrma_order_step_for(none, w), NBRMA_ORDER_GO);
    EXPECT_EQ(nbrma_order_step_for(ucx, NBRMA_WAY_UCX), NBRMA_ORDER_FENCE);
    EXPECT_EQ(nbrma_order_step_for(ucx, NBRMA_WAY_UNFENCED), NBRMA_ORDER_COMPLETE_FIRST);
    for (nbrma_way w : {NBRMA_WAY_UCX, NBRMA_WAY_UNFENCED}) {
        EXPECT_EQ(nbrma_order_step_for(unfenced, w), NBRMA_ORDER_COMPLETE_FIRST);
        EXPECT_EQ(nbrma_order_step_for(ucx | unfenced, w), NBRMA_ORDER_COMPLETE_FIRST);
    }
}

// --- the simulator ---------------------------------------------------------

using step_rule = nbrma_order_step (*)(unsigned, nbrma_way);

nbrma_order_step without_fences(unsigned in_flight, nbrma_way travels)
{
    nbrma_order_step s = nbrma_order_step_for(in_flight, travels);
    return s == NBRMA_ORDER_FENCE ? NBRMA_ORDER_GO : s;
}

// One origin issues `n` ordered operations with random facts toward one
// target. Operations in flight are performed at the target in any order the
// transport allows: a UCX operation only after every UCX operation issued
// before the last fence that preceded it; an active message whenever. An
// operation whose route leaves nothing in flight is performed during its
// call (a copy at once; UCX compare-and-swap loops once the UCX operations
// fenced before them were performed). Returns the number of operations the
// target performed before an operation issued earlier.
int overtakes_in_one_run(uint32_t seed, int n, step_rule rule)
{
    struct pending {
        int seq;
        nbrma_way way;
        int fence_epoch;        // fences issued before it
    };
    std::mt19937 rng(seed);
    std::vector<pending> flight;
    std::vector<int> performed;
    unsigned in_flight = NBRMA_WAY_NONE;
    int fences = 0;

    auto may_perform = [&](const pending &p) {
        if (p.way != NBRMA_WAY_UCX)
            return true;
        for (const pending &q : flight)
            if (q.way == NBRMA_WAY_UCX && q.fence_epoch < p.fence_epoch)
                return false;
        return true;
    };
    auto perform_one = [&](size_t i) {
        performed.push_back(flight[i].seq);
        flight.erase(flight.begin() + static_cast<long>(i));
    };
    auto perform_random_ready = [&]() {
        std::vector<size_t> ready;
        for (size_t i = 0; i < flight.size(); i++)
            if (may_perform(flight[i]))
                ready.push_back(i);
        if (!ready.empty())
            perform_one(ready[rng() % ready.size()]);
    };

    for (int seq = 0; seq < n; seq++) {
        while (!flight.empty() && rng() % 3 == 0)       // the transport moves on meanwhile
            perform_random_ready();
        nbrma_op_facts f = facts_from_bits(rng() % 128);
        nbrma_route r = nbrma_route_of(&f);
        switch (rule(in_flight, r.travels)) {
        case NBRMA_ORDER_GO:
            break;
        case NBRMA_ORDER_FENCE:
            fences++;
            break;
        case NBRMA_ORDER_COMPLETE_FIRST:
            while (!flight.empty())
                perform_random_ready();
            in_flight = NBRMA_WAY_NONE;
            break;
        }
        if (r.leaves == NBRMA_WAY_NONE) {
            if (r.travels == NBRMA_WAY_UCX) {   // its answers wait for what was fenced before it
                for (;;) {
                    bool fenced_before = false;
                    for (const pending &p : flight)
                        fenced_before |= p.way == NBRMA_WAY_UCX && p.fence_epoch < fences;
                    if (!fenced_before)
                        break;
                    perform_random_ready();
                }
            }
            performed.push_back(seq);
        } else {
            flight.push_back({seq, r.leaves, fences});
            in_flight |= r.leaves;
        }
    }
    while (!flight.empty())
        perform_random_ready();

    int overtakes = 0;
    for (size_t i = 1; i < performed.size(); i++)
        overtakes += performed[i] < performed[i - 1];
    return overtakes;
}

TEST(order_sim, ordered_operations_are_performed_in_issue_order)
{
    for (uint32_t seed = 1; seed <= 5000; seed++)
        ASSERT_EQ(overtakes_in_one_run(seed, 24, nbrma_order_step_for), 0) << "seed " << seed;
}

TEST(order_sim, the_check_finds_reordering_without_the_fence)
{
    int overtakes = 0;
    for (uint32_t seed = 1; seed <= 5000; seed++)
        overtakes += overtakes_in_one_run(seed, 24, without_fences);
    EXPECT_GT(overtakes, 0);
}

}  // namespace
