// The mailboxes' memory kept across windows (ch4_netmod_rma/os/kept_segments.c)
// without MPI: a freed segment comes back for the next one of its size and
// only for that size, a mapping comes back for the same peer, address and key
// and never for another segment's key, and everything kept is gone once
// released (a new get makes a new segment).

#include <gtest/gtest.h>

#include <cstring>

#include "kept_segments.h"
#include "shared_segment.h"

namespace {

class KeptSegments : public ::testing::Test {
  protected:
    void TearDown() override { nbrma_kept_segments_release_all(); }
};

TEST_F(KeptSegments, AFreedSegmentComesBackForItsSizeOnly)
{
    auto *first = static_cast<char *>(nbrma_kept_segment_get(4096));
    ASSERT_NE(first, nullptr);
    nbrma_segment_key_t key = nbrma_segment_key(first);
    first[10] = 3;
    nbrma_kept_segment_put(first, 4096);
    auto *other = static_cast<char *>(nbrma_kept_segment_get(8192));
    ASSERT_NE(other, nullptr);
    EXPECT_NE(nbrma_segment_key(other).cookie, key.cookie) << "another size: a new segment";
    EXPECT_EQ(other[10], 0) << "a new one is zeroed";
    auto *again = static_cast<char *>(nbrma_kept_segment_get(4096));
    EXPECT_EQ(again, first);
    EXPECT_EQ(nbrma_segment_key(again).cookie, key.cookie);
    nbrma_kept_segment_put(again, 4096);
    nbrma_kept_segment_put(other, 8192);
}

TEST_F(KeptSegments, AtMostTheLimitIsKept)
{
    // told apart by their keys' random cookies (a new segment may be
    // attached where a released one was)
    void *segment[NBRMA_KEPT_SEGMENTS + 1];
    uint64_t cookie[NBRMA_KEPT_SEGMENTS + 1];
    for (int i = 0; i <= NBRMA_KEPT_SEGMENTS; i++) {
        ASSERT_NE(segment[i] = nbrma_kept_segment_get(4096), nullptr);
        cookie[i] = nbrma_segment_key(segment[i]).cookie;
    }
    for (auto s : segment)
        nbrma_kept_segment_put(s, 4096);
    int back = 0;
    void *got[NBRMA_KEPT_SEGMENTS + 1];
    for (int i = 0; i <= NBRMA_KEPT_SEGMENTS; i++) {
        ASSERT_NE(got[i] = nbrma_kept_segment_get(4096), nullptr);
        for (auto c : cookie)
            back += nbrma_segment_key(got[i]).cookie == c;
    }
    EXPECT_EQ(back, NBRMA_KEPT_SEGMENTS) << "the one beyond the limit was released";
    for (auto s : got)
        nbrma_kept_segment_put(s, 4096);
}

TEST_F(KeptSegments, AMappingComesBackForTheSameSegmentOnly)
{
    int peer;   // an identity of the peer, opaque to the cache
    auto *mine = static_cast<char *>(nbrma_kept_segment_get(4096));
    ASSERT_NE(mine, nullptr);
    nbrma_segment_key_t key = nbrma_segment_key(mine);
    nbrma_kept_mapping_t *m = nbrma_kept_mapping_get(&peer, 0x1000, &key, sizeof(key));
    ASSERT_NE(m, nullptr);
    std::strcpy(mine, "seen through the mapping");
    EXPECT_STREQ(static_cast<char *>(m->ptr), "seen through the mapping");
    void *ptr = m->ptr;
    nbrma_kept_mapping_unuse(m);
    m = nbrma_kept_mapping_get(&peer, 0x1000, &key, sizeof(key));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->ptr, ptr) << "kept, not attached again";
    nbrma_kept_mapping_unuse(m);

    // the peer freed its segment and made another: another key, a new mapping
    auto *next = static_cast<char *>(nbrma_kept_segment_get(8192));
    ASSERT_NE(next, nullptr);
    nbrma_segment_key_t next_key = nbrma_segment_key(next);
    std::strcpy(next, "the new segment");
    m = nbrma_kept_mapping_get(&peer, 0x1000, &next_key, sizeof(next_key));
    ASSERT_NE(m, nullptr);
    EXPECT_STREQ(static_cast<char *>(m->ptr), "the new segment");
    nbrma_kept_mapping_unuse(m);
    // a key of another size of record names nothing
    EXPECT_EQ(nbrma_kept_mapping_get(&peer, 0x1000, &key, sizeof(key) - 1), nullptr);
    nbrma_kept_segment_put(mine, 4096);
    nbrma_kept_segment_put(next, 8192);
}

TEST_F(KeptSegments, ReleasedAllGetMakesANewSegment)
{
    void *first = nbrma_kept_segment_get(4096);
    ASSERT_NE(first, nullptr);
    nbrma_segment_key_t key = nbrma_segment_key(first);
    nbrma_kept_segment_put(first, 4096);
    nbrma_kept_segments_release_all();
    EXPECT_EQ(nbrma_segment_attach(&key), nullptr) << "detached and removed: gone";
    void *again = nbrma_kept_segment_get(4096);
    ASSERT_NE(again, nullptr);
    EXPECT_NE(nbrma_segment_key(again).cookie, key.cookie);
    nbrma_kept_segment_put(again, 4096);
}

}  // namespace
