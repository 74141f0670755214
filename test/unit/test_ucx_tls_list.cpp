// What a UCX_TLS value lets UCX open (ch4_netmod_rma/formats/ucx_tls_list.c),
// as UCX 1.13 reads it: the values users set for shared memory, tcp only,
// exclusions, aliases and ":aux" suffixes.

#include <gtest/gtest.h>

#include "ucx_tls_list.h"

namespace {

const char *const segment_transports[] = {"posix", "sysv"};

bool segment_transport_opens(const char *tls)
{
    return nbrma_ucx_tls_allows_any(tls, segment_transports, 2);
}

TEST(UcxTlsList, UnsetOpensEverything)
{
    EXPECT_TRUE(segment_transport_opens(nullptr));
    EXPECT_FALSE(nbrma_ucx_tls_allows_any(nullptr, segment_transports, 0));
}

TEST(UcxTlsList, TcpOnlyOpensNoSegment)
{
    EXPECT_FALSE(segment_transport_opens("tcp,self"));
    EXPECT_FALSE(segment_transport_opens("self,tcp"));
    EXPECT_FALSE(segment_transport_opens("tcp"));
    EXPECT_FALSE(segment_transport_opens("rc,ud,self,cma"));
    EXPECT_FALSE(segment_transport_opens(""));
    EXPECT_FALSE(segment_transport_opens("posixx,sysvv,s"));   // whole names only
}

TEST(UcxTlsList, SharedMemoryByNameOrAlias)
{
    EXPECT_TRUE(segment_transport_opens("posix,self"));
    EXPECT_TRUE(segment_transport_opens("tcp,sysv"));
    EXPECT_TRUE(segment_transport_opens("sm,self"));
    EXPECT_TRUE(segment_transport_opens("shm"));
    EXPECT_TRUE(segment_transport_opens("mm,tcp"));
    EXPECT_TRUE(segment_transport_opens("all"));
    EXPECT_TRUE(segment_transport_opens("tcp,posix:aux"));
}

TEST(UcxTlsList, ExclusionsOpenWhatTheyDoNotName)
{
    EXPECT_TRUE(segment_transport_opens("^tcp"));
    EXPECT_TRUE(segment_transport_opens("^posix"));     // sysv still opens
    EXPECT_FALSE(segment_transport_opens("^posix,sysv"));
    EXPECT_FALSE(segment_transport_opens("^sm"));
    EXPECT_FALSE(segment_transport_opens("^shm,tcp"));
    EXPECT_FALSE(segment_transport_opens("^mm"));
    EXPECT_FALSE(segment_transport_opens("^all"));
    EXPECT_TRUE(segment_transport_opens("^"));
}

TEST(UcxTlsList, OtherTransportsAreNotSharedMemory)
{
    const char *const tcp[] = {"tcp"};
    EXPECT_TRUE(nbrma_ucx_tls_allows_any("tcp,self", tcp, 1));
    EXPECT_FALSE(nbrma_ucx_tls_allows_any("sm,self", tcp, 1));
    EXPECT_FALSE(nbrma_ucx_tls_allows_any("shm", tcp, 1));
    EXPECT_TRUE(nbrma_ucx_tls_allows_any("^sm", tcp, 1));
}

}  // namespace
