// Memory that stays the process's own (ch4_netmod_rma/os/private_memory.c)
// without MPI or UCX: the limit of half the machine's memory, and an
// allocation's bytes moved into private memory at the same address once the
// shared segment under it is gone (as MPI_Finalize does to UCX's segments),
// for sizes of whole and partial pages; misaligned addresses and refused
// moves leave no copy behind.

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "private_memory.h"

namespace {

size_t page_size()
{
    return size_t(sysconf(_SC_PAGESIZE));
}

// whether [p, p + bytes) is mapped at all (msync fails with ENOMEM if not)
bool mapped(void *p, size_t bytes)
{
    return msync(p, bytes, MS_ASYNC) == 0 || errno != ENOMEM;
}

// the flags of the mapping that holds p in /proc/self/maps ("rw-p", "rw-s")
std::string flags_of(const void *p)
{
    FILE *f = std::fopen("/proc/self/maps", "r");
    char line[512];
    std::string flags;
    while (f && std::fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[8];
        if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 &&
            uintptr_t(p) >= lo && uintptr_t(p) < hi)
            flags = perms;
    }
    if (f)
        std::fclose(f);
    return flags;
}

unsigned char pattern(size_t i)
{
    return static_cast<unsigned char>(i * 131 + 7);
}

}  // namespace

TEST(PrivateMemory, HalfTheMachinesMemoryIsTheLimit)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    size_t page = page_size();
    ASSERT_GT(pages, 1);
    size_t half = size_t(pages) / 2 * page;

    EXPECT_FALSE(nbrma_at_least_half_of_memory(0));
    EXPECT_FALSE(nbrma_at_least_half_of_memory(1 << 20));
    EXPECT_FALSE(nbrma_at_least_half_of_memory(half - 1));
    EXPECT_TRUE(nbrma_at_least_half_of_memory(half));
    EXPECT_TRUE(nbrma_at_least_half_of_memory(size_t(1) << 60));
    EXPECT_TRUE(nbrma_at_least_half_of_memory(SIZE_MAX));
}

// A shared segment (UCX's sysv and posix segments are shared mappings) is
// copied, unmapped, and its bytes come back at its address as private
// memory, writable; the copy's own address is free again.
TEST(PrivateMemory, BytesMoveToTheSameAddressAsPrivateMemory)
{
    const size_t page = page_size();
    const size_t sizes[] = {1, 100, page - 1, page, page + 1, 3 * page + 17, 64 * page};
    for (size_t bytes : sizes) {
        size_t whole = (bytes + page - 1) / page * page;
        auto *base = static_cast<unsigned char *>(
            mmap(nullptr, whole, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
        ASSERT_NE(base, MAP_FAILED);
        for (size_t i = 0; i < bytes; i++)
            base[i] = pattern(i);
        EXPECT_EQ(flags_of(base), "rw-s");

        auto *copy = static_cast<unsigned char *>(nbrma_private_copy(base, bytes));
        ASSERT_NE(copy, nullptr) << bytes;
        EXPECT_NE(copy, base);
        EXPECT_EQ(std::memcmp(copy, base, bytes), 0);
        ASSERT_EQ(munmap(base, whole), 0);     // UCX lets go of its segment
        EXPECT_FALSE(mapped(base, whole));

        ASSERT_TRUE(nbrma_private_copy_move(copy, base, bytes)) << bytes;
        EXPECT_TRUE(mapped(base, whole));
        EXPECT_FALSE(mapped(copy, whole)) << "the copy moved, it was not duplicated";
        EXPECT_EQ(flags_of(base), "rw-p");
        size_t bad = bytes;
        for (size_t i = 0; i < bytes && bad == bytes; i++)
            if (base[i] != pattern(i))
                bad = i;
        EXPECT_EQ(bad, bytes) << "lost its data at byte " << bad;
        base[whole - 1] = 1;    // the whole last page is writable
        munmap(base, whole);
    }
}

TEST(PrivateMemory, MisalignedAddressesAreNotCopied)
{
    const size_t page = page_size();
    auto *base = static_cast<unsigned char *>(
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(base, MAP_FAILED);
    EXPECT_EQ(nbrma_private_copy(base + 8, 100), nullptr);
    EXPECT_EQ(nbrma_private_copy(base + page - 1, 1), nullptr);
    munmap(base, 2 * page);
}

// A move the kernel refuses (here: to an address that is not a page's)
// returns false and unmaps the copy.
TEST(PrivateMemory, ARefusedMoveLeavesNoCopy)
{
    const size_t page = page_size();
    auto *base = static_cast<unsigned char *>(
        mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(base, MAP_FAILED);
    void *copy = nbrma_private_copy(base, page);
    ASSERT_NE(copy, nullptr);
    EXPECT_FALSE(nbrma_private_copy_move(copy, base + 1, page));
    EXPECT_FALSE(mapped(copy, page));
    EXPECT_TRUE(mapped(base, page)) << "the segment is untouched";
    munmap(base, page);
}
