// The entries of the key exchange (ch4_netmod_rma/formats/key_records.c)
// without MPI: a record and its key packed into an entry, keys that fit the
// slot and keys that do not (left for the second allgather), records
// without a key, and the records and keys out of gathered entries by rank.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "key_records.h"

namespace {

struct record {
    uint64_t base;
    uint64_t key_bytes;
    int rank;
};

constexpr size_t at = offsetof(record, key_bytes);

std::vector<char> entry_of(const record &rec, const std::string &key)
{
    std::vector<char> entry(nbrma_key_entry_bytes(sizeof(record)), 0);

    nbrma_key_entry_pack(entry.data(), &rec, sizeof(rec), at, key.empty() ? nullptr : key.data());
    return entry;
}

std::vector<char> gathered(const std::vector<std::vector<char>> &entries)
{
    std::vector<char> all;

    for (const auto &e : entries)
        all.insert(all.end(), e.begin(), e.end());
    return all;
}

TEST(KeyRecords, EntryIsTheRecordAndASlot)
{
    EXPECT_EQ(nbrma_key_entry_bytes(24), 24u + NBRMA_KEY_SLOT);
    record rec = {0x1000, 5, 3};
    EXPECT_EQ(nbrma_key_record_key_bytes(&rec, at), 5u);
}

TEST(KeyRecords, PackCarriesAKeyThatFits)
{
    record rec = {0x1000, 5, 0};
    std::vector<char> e = entry_of(rec, "hello");

    EXPECT_EQ(std::memcmp(e.data(), &rec, sizeof(rec)), 0);
    EXPECT_EQ(std::string(e.data() + sizeof(rec), 5), "hello");
    EXPECT_EQ(e[sizeof(rec) + 5], 0);
}

TEST(KeyRecords, PackLeavesTheSlotEmptyForALongKeyOrNone)
{
    std::string long_key(NBRMA_KEY_SLOT + 1, 'k');
    record rec = {0x1000, long_key.size(), 0};
    std::vector<char> e = entry_of(rec, long_key);

    EXPECT_EQ(std::memcmp(e.data(), &rec, sizeof(rec)), 0);
    for (size_t i = sizeof(rec); i < e.size(); i++)
        ASSERT_EQ(e[i], 0) << i;

    record none = {0x2000, 0, 1};
    std::vector<char> n = entry_of(none, "");
    for (size_t i = sizeof(none); i < n.size(); i++)
        ASSERT_EQ(n[i], 0) << i;

    // exactly the slot's size still fits
    std::string slot_key(NBRMA_KEY_SLOT, 's');
    record full = {0x3000, slot_key.size(), 2};
    std::vector<char> f = entry_of(full, slot_key);
    EXPECT_EQ(std::string(f.data() + sizeof(full), NBRMA_KEY_SLOT), slot_key);
}

TEST(KeyRecords, UnpackGivesRecordsByRankAndTheLongestKey)
{
    std::vector<std::string> keys = {"ab", "", "abcdefg"};
    std::vector<std::vector<char>> entries;
    for (int r = 0; r < 3; r++)
        entries.push_back(entry_of(record{uint64_t(0x1000 * (r + 1)), keys[r].size(), r}, keys[r]));
    std::vector<char> all_entries = gathered(entries);
    record all[3];
    int bad = -1;

    size_t max_bytes = nbrma_key_entries_unpack(all_entries.data(), 3, sizeof(record), at, all, &bad);
    EXPECT_EQ(max_bytes, 7u);
    for (int r = 0; r < 3; r++) {
        EXPECT_EQ(all[r].rank, r);
        EXPECT_EQ(all[r].base, uint64_t(0x1000 * (r + 1)));
        EXPECT_EQ(all[r].key_bytes, keys[r].size());
    }

    std::vector<char> out(max_bytes * 3, 'x');
    nbrma_key_entries_keys(all_entries.data(), 3, sizeof(record), max_bytes, out.data());
    EXPECT_EQ(std::string(out.data(), 2), "ab");
    EXPECT_EQ(out[2], 0);       // the rest of the slot
    EXPECT_EQ(std::string(out.data() + 7, 7), std::string(7, '\0'));
    EXPECT_EQ(std::string(out.data() + 14, 7), "abcdefg");
}

TEST(KeyRecords, NoKeysAnywhereIsOneByte)
{
    std::vector<std::vector<char>> entries = {entry_of(record{1, 0, 0}, ""),
                                              entry_of(record{2, 0, 1}, "")};
    std::vector<char> all_entries = gathered(entries);
    record all[2];
    int bad = -1;

    EXPECT_EQ(nbrma_key_entries_unpack(all_entries.data(), 2, sizeof(record), at, all, &bad), 1u);
    EXPECT_EQ(all[1].base, 2u);
}

TEST(KeyRecords, ALongKeyElsewhereIsSeenInTheRecords)
{
    std::string long_key(300, 'L');
    std::vector<std::vector<char>> entries = {entry_of(record{1, 3, 0}, "abc"),
                                              entry_of(record{2, long_key.size(), 1}, long_key)};
    std::vector<char> all_entries = gathered(entries);
    record all[2];
    int bad = -1;

    size_t max_bytes = nbrma_key_entries_unpack(all_entries.data(), 2, sizeof(record), at, all, &bad);
    EXPECT_EQ(max_bytes, 300u);
    EXPECT_GT(max_bytes, size_t(NBRMA_KEY_SLOT));     // the glue's second allgather
}

// A record that claims a key longer than any UCX packs (a corrupt one)
// would size the second allgather: the unpack refuses it and names the rank.
TEST(KeyRecords, AKeyLongerThanTheMaximumIsRefused)
{
    std::vector<std::vector<char>> entries = {
        entry_of(record{1, 3, 0}, "abc"), entry_of(record{2, NBRMA_KEY_MAX_BYTES, 1}, ""),
        entry_of(record{3, uint64_t(NBRMA_KEY_MAX_BYTES) + 1, 2}, ""),
        entry_of(record{4, UINT64_MAX, 3}, "")};
    std::vector<char> all_entries = gathered(entries);
    record all[4];
    int bad = -1;

    EXPECT_EQ(nbrma_key_entries_unpack(all_entries.data(), 2, sizeof(record), at, all, &bad),
              size_t(NBRMA_KEY_MAX_BYTES)) << "the maximum itself is a length";
    EXPECT_EQ(bad, -1);
    EXPECT_EQ(nbrma_key_entries_unpack(all_entries.data(), 4, sizeof(record), at, all, &bad), 0u);
    EXPECT_EQ(bad, 2);
}

}  // namespace
