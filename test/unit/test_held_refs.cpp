// The table of objects held until done (ch4_netmod_rma/formats/held_refs.c)
// without MPI: pruning the done ones in order, dropping all, room made by
// pruning before growing, growth by doubling from 16, and removal.

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "held_refs.h"

namespace {

struct obj {
    bool done = false;
    int refs = 1;
};

bool is_done(void *o)
{
    return static_cast<obj *>(o)->done;
}

void drop(void *o)
{
    static_cast<obj *>(o)->refs--;
}

std::vector<obj *> contents(const nbrma_held_refs &t)
{
    std::vector<obj *> v;

    for (size_t i = 0; i < t.n; i++)
        v.push_back(static_cast<obj *>(t.v[i]));
    return v;
}

void hold(nbrma_held_refs *t, obj *o)
{
    ASSERT_TRUE(nbrma_held_refs_reserve(t, is_done, drop));
    o->refs++;
    nbrma_held_refs_add(t, o);
}

TEST(HeldRefs, PruneDropsTheDoneOnesAndKeepsTheOrder)
{
    nbrma_held_refs t = {};
    obj o[5];

    for (auto &x : o)
        hold(&t, &x);
    o[1].done = o[3].done = true;
    nbrma_held_refs_prune(&t, false, is_done, drop);
    EXPECT_EQ(contents(t), (std::vector<obj *>{&o[0], &o[2], &o[4]}));
    EXPECT_EQ(o[1].refs, 1);
    EXPECT_EQ(o[0].refs, 2);
    nbrma_held_refs_prune(&t, true, is_done, drop);
    EXPECT_EQ(t.n, 0u);
    for (auto &x : o)
        EXPECT_EQ(x.refs, 1);
    nbrma_held_refs_free(&t);
    EXPECT_EQ(t.v, nullptr);
    EXPECT_EQ(t.cap, 0u);
}

TEST(HeldRefs, GrowsByDoublingFromSixteen)
{
    nbrma_held_refs t = {};
    std::vector<obj> o(40);

    hold(&t, &o[0]);
    EXPECT_EQ(t.cap, 16u);
    for (size_t i = 1; i < 17; i++)
        hold(&t, &o[i]);
    EXPECT_EQ(t.cap, 32u);
    for (size_t i = 17; i < 40; i++)
        hold(&t, &o[i]);
    EXPECT_EQ(t.cap, 64u);
    EXPECT_EQ(t.n, 40u);
    nbrma_held_refs_prune(&t, true, is_done, drop);
    nbrma_held_refs_free(&t);
}

TEST(HeldRefs, AFullTablePrunesBeforeItGrows)
{
    nbrma_held_refs t = {};
    std::vector<obj> o(17);

    for (size_t i = 0; i < 16; i++)
        hold(&t, &o[i]);
    ASSERT_EQ(t.cap, 16u);
    o[5].done = true;
    hold(&t, &o[16]);
    EXPECT_EQ(t.cap, 16u);      // o[5] made room
    EXPECT_EQ(t.n, 16u);
    EXPECT_EQ(o[5].refs, 1);
    nbrma_held_refs_prune(&t, true, is_done, drop);
    nbrma_held_refs_free(&t);
}

TEST(HeldRefs, ANotFullTableDoesNotPrune)
{
    nbrma_held_refs t = {};
    obj a, b;

    hold(&t, &a);
    a.done = true;
    hold(&t, &b);
    EXPECT_EQ(t.n, 2u);
    EXPECT_EQ(a.refs, 2);
    nbrma_held_refs_prune(&t, true, is_done, drop);
    nbrma_held_refs_free(&t);
}

TEST(HeldRefs, RemoveTakesOneOutTheLastInItsPlace)
{
    nbrma_held_refs t = {};
    obj o[4];

    for (auto &x : o)
        hold(&t, &x);
    EXPECT_TRUE(nbrma_held_refs_remove(&t, &o[1]));
    EXPECT_EQ(contents(t), (std::vector<obj *>{&o[0], &o[3], &o[2]}));
    EXPECT_FALSE(nbrma_held_refs_remove(&t, &o[1]));
    EXPECT_EQ(o[1].refs, 2);    // the caller's to give back
    EXPECT_TRUE(nbrma_held_refs_remove(&t, &o[2]));
    EXPECT_EQ(t.n, 2u);
    nbrma_held_refs_prune(&t, true, is_done, drop);
    nbrma_held_refs_free(&t);

    nbrma_held_refs empty = {};
    EXPECT_FALSE(nbrma_held_refs_remove(&empty, &o[0]));
}

}  // namespace
