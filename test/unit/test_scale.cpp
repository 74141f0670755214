// Paper VII-B: the matching state between two processes is one triple of
// 64-bit counters, whatever the number of pending epochs between them.
#include <gtest/gtest.h>

#include <cstdlib>

#include "sim_world.hpp"

using nbrma_sim::world;

namespace {

// NBRMA_SCALE_EPOCHS overrides the count, e.g. for runs under valgrind.
const std::size_t million = [] {
    const char *value = std::getenv("NBRMA_SCALE_EPOCHS");
    return value && *value ? static_cast<std::size_t>(std::strtoull(value, nullptr, 10)) : std::size_t(1000000);
}();

void open_closed_access_epoch(world &w, int origin, int target)
{
    ASSERT_EQ(nbrma_istart(w.e(origin), &target, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_icomplete(w.e(origin), nullptr), NBRMA_OK);
}

void expose_and_wait(world &w, int target, int origin)
{
    ASSERT_EQ(nbrma_ipost(w.e(target), &origin, 1, 0, nullptr), NBRMA_OK);
    ASSERT_EQ(nbrma_iwait(w.e(target), nullptr), NBRMA_OK);
}

}  // namespace

TEST(scale, a_million_pending_access_epochs_leave_matching_state_unchanged)
{
    world w(2);
    open_closed_access_epoch(w, 0, 1);
    const std::size_t state_with_one = w.impl(0).per_peer_state_bytes();
    EXPECT_EQ(state_with_one, 2 * (sizeof(nbrma::match_triple) + sizeof(nbrma::peer_access_state)));

    for (std::size_t k = 1; k < million; ++k)
        open_closed_access_epoch(w, 0, 1);
    EXPECT_EQ(w.impl(0).deferred_count(), million - 1) << "the deferred queue grows";
    EXPECT_EQ(w.impl(0).active_count(), 1u);
    EXPECT_EQ(w.impl(0).per_peer_state_bytes(), state_with_one) << "the matching state does not";
    EXPECT_EQ(w.impl(0).triple(1).accesses_requested, 1u) << "only activated epochs touch the triple";

    // The target catches up one exposure at a time.
    for (std::size_t k = 0; k < million; ++k) {
        expose_and_wait(w, 1, 0);
        w.drain();
    }
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(1)));
    EXPECT_EQ(w.impl(0).triple(1).accesses_requested, million);
    EXPECT_EQ(w.impl(0).triple(1).granted(), million);
    EXPECT_EQ(w.impl(1).triple(0).exposures_opened, million);
    EXPECT_EQ(w.impl(0).per_peer_state_bytes(), state_with_one);
    EXPECT_TRUE(w.failures().empty());
}

TEST(scale, a_million_grants_ahead_fit_in_one_counter)
{
    world w(2);
    ASSERT_EQ(nbrma_set_reorder_flags(w.e(1), NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE), NBRMA_OK);
    const std::size_t origin_state = w.impl(0).per_peer_state_bytes();
    for (std::size_t k = 0; k < million; ++k)
        expose_and_wait(w, 1, 0);
    w.drain();
    // A million grants the origin has not used yet: still one 64-bit value.
    EXPECT_EQ(w.impl(0).triple(1).granted(), million);
    EXPECT_EQ(w.impl(0).triple(1).accesses_requested, 0u);
    EXPECT_EQ(w.impl(0).per_peer_state_bytes(), origin_state);
    for (std::size_t k = 0; k < million; ++k)
        open_closed_access_epoch(w, 0, 1);
    w.drain();
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(0)));
    EXPECT_FALSE(nbrma_has_pending_epochs(w.e(1)));
    EXPECT_TRUE(w.failures().empty());
}
