// Shared segments (ch4_netmod_rma/os/shared_segment.h) without MPI: what one
// mapping writes the other reads, a key whose cookie, id or size is not the
// segment's attaches nothing, and another process attaches a segment its
// creator has already marked for removal (as a peer does after the window's
// exchange).

#include <gtest/gtest.h>

#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include "shared_segment.h"

namespace {

TEST(SharedSegment, TwoMappingsShareTheBytes)
{
    auto *mine = static_cast<char *>(nbrma_segment_create(4096));
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mine) % 64, 0u);
    for (int i = 0; i < 4096; i++)
        ASSERT_EQ(mine[i], 0) << "zeroed at byte " << i;

    nbrma_segment_key_t key = nbrma_segment_key(mine);
    EXPECT_NE(key.cookie, 0u);
    auto *other = static_cast<char *>(nbrma_segment_attach(&key));
    ASSERT_NE(other, nullptr);
    EXPECT_NE(other, mine) << "a second mapping";
    std::strcpy(mine + 100, "written through the first");
    EXPECT_STREQ(other + 100, "written through the first");
    other[4095] = 7;
    EXPECT_EQ(mine[4095], 7);
    EXPECT_EQ(nbrma_segment_key(other).cookie, key.cookie);
    nbrma_segment_detach(other);
    nbrma_segment_detach(mine);
}

TEST(SharedSegment, AKeyThatIsNotTheSegmentsAttachesNothing)
{
    void *mine = nbrma_segment_create(256);
    ASSERT_NE(mine, nullptr);
    nbrma_segment_key_t key = nbrma_segment_key(mine);

    nbrma_segment_key_t wrong_cookie = key;
    wrong_cookie.cookie ^= 1;
    EXPECT_EQ(key.bytes, 256u);
    EXPECT_EQ(nbrma_segment_attach(&wrong_cookie), nullptr) << "an id reused by another segment";
    nbrma_segment_key_t no_cookie = key;
    no_cookie.cookie = 0;
    EXPECT_EQ(nbrma_segment_attach(&no_cookie), nullptr);
    nbrma_segment_key_t no_id = {-1, key.cookie, key.bytes};
    EXPECT_EQ(nbrma_segment_attach(&no_id), nullptr);
    nbrma_segment_key_t huge_id = {INT64_MAX, key.cookie, key.bytes};
    EXPECT_EQ(nbrma_segment_attach(&huge_id), nullptr);
    nbrma_segment_key_t larger = key;
    larger.bytes = 1 << 20;
    EXPECT_EQ(nbrma_segment_attach(&larger), nullptr) << "the system's segment is smaller";
    nbrma_segment_key_t smaller = key;
    smaller.bytes = 8;
    EXPECT_EQ(nbrma_segment_attach(&smaller), nullptr) << "not the key the segment holds";
    nbrma_segment_detach(mine);
}

TEST(SharedSegment, AnotherProcessAttachesAfterTheCreatorMarkedItForRemoval)
{
    auto *mine = static_cast<volatile char *>(nbrma_segment_create(64));
    ASSERT_NE(mine, nullptr);
    nbrma_segment_key_t key = nbrma_segment_key(const_cast<char *>(mine));

    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // the child's inherited mapping goes first: only the key may find it
        nbrma_segment_detach(const_cast<char *>(mine));
        auto *peer = static_cast<char *>(nbrma_segment_attach(&key));
        if (peer == nullptr)
            _exit(2);
        peer[0] = 42;
        nbrma_segment_detach(peer);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child could not attach";
    EXPECT_EQ(mine[0], 42);
    nbrma_segment_detach(const_cast<char *>(mine));
    EXPECT_EQ(nbrma_segment_attach(&key), nullptr) << "gone with its last mapping";
}

}  // namespace
