// The strings the user passes (formats/user_strings.c), tested without MPI:
// MPIX_Win_op_intrinsic's list of operation names, and info values read as
// booleans and sizes. Each refused input must name its fault as the glue
// reports it (hooks/rma_extension_hooks.c: the whole list for a malformed
// one, the name for an unknown one), and a seeded random list must never
// make the parser write beyond what the caller gave it.

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "nbrma_core.h"
#include "user_strings.h"
}

namespace {

// The room of MPIDI_NBRMA_intrinsic_query_t's ops[] (ch4/include/nbrma_win.h),
// which the glue passes as the capacity.
constexpr size_t query_capacity = 16;

// A parse with a sentinel behind the caller's names[] and in bad_name, to
// see what the parser wrote.
struct parsed_list {
    nbrma_intrinsic_list_status_t status;
    std::vector<nbrma_intrinsic_name_t> names;  // names[0..n)
    std::string bad_name;
    bool bad_name_untouched;
    bool wrote_beyond;
};

constexpr char bad_name_fill = '#';
constexpr nbrma_intrinsic_name_t names_fill = NBRMA_INTRINSIC_N_NAMES;

parsed_list parse(const std::string &list, size_t capacity = query_capacity)
{
    std::vector<nbrma_intrinsic_name_t> names(capacity + 1, names_fill);
    char bad_name[NBRMA_INTRINSIC_NAME_SIZE + 1];
    std::memset(bad_name, bad_name_fill, sizeof(bad_name));
    size_t n = capacity + 1;

    parsed_list r;
    r.status = nbrma_intrinsic_list_parse(list.c_str(), names.data(), capacity, &n, bad_name);
    r.wrote_beyond = n > capacity || names[capacity] != names_fill ||
                     bad_name[NBRMA_INTRINSIC_NAME_SIZE] != bad_name_fill;
    r.names.assign(names.begin(), names.begin() + (n > capacity ? capacity : n));
    r.bad_name_untouched = bad_name[0] == bad_name_fill;
    if (r.status == NBRMA_INTRINSIC_LIST_UNKNOWN_NAME &&
        std::memchr(bad_name, '\0', NBRMA_INTRINSIC_NAME_SIZE) != nullptr)
        r.bad_name = bad_name;
    return r;
}

std::string repeated(const std::string &name, size_t count)
{
    std::string list;
    for (size_t i = 0; i < count; i++)
        list += (i ? "," : "") + name;
    return list;
}

using names_t = std::vector<nbrma_intrinsic_name_t>;

}  // namespace

TEST(IntrinsicList, NamesWithBlanksAroundCommas)
{
    parsed_list r = parse("sum, replace,cas");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_OK);
    EXPECT_EQ(r.names,
              (names_t{NBRMA_INTRINSIC_SUM, NBRMA_INTRINSIC_REPLACE, NBRMA_INTRINSIC_CAS}));
    EXPECT_TRUE(r.bad_name_untouched);
    EXPECT_FALSE(r.wrote_beyond);
}

TEST(IntrinsicList, EveryNameInAnyCase)
{
    const char *lower[] = {"sum", "prod", "max",    "min",    "land",    "lor",   "lxor", "band",
                           "bor", "bxor", "maxloc", "minloc", "replace", "no_op", "cas"};
    static_assert(sizeof(lower) / sizeof(lower[0]) == NBRMA_INTRINSIC_N_NAMES, "every name");
    for (int i = 0; i < NBRMA_INTRINSIC_N_NAMES; i++) {
        std::string upper = lower[i], mixed = lower[i];
        for (size_t c = 0; c < upper.size(); c++) {
            upper[c] = static_cast<char>(std::toupper(static_cast<unsigned char>(upper[c])));
            if (c % 2 == 0)
                mixed[c] = upper[c];
        }
        for (const std::string &name : {std::string(lower[i]), upper, mixed}) {
            parsed_list r = parse(name);
            EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_OK) << name;
            EXPECT_EQ(r.names, names_t{static_cast<nbrma_intrinsic_name_t>(i)}) << name;
        }
    }
    EXPECT_EQ(parse("SUM").names, names_t{NBRMA_INTRINSIC_SUM});
}

TEST(IntrinsicList, NoOpAndCas)
{
    parsed_list r = parse("no_op");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_OK);
    EXPECT_EQ(r.names, names_t{NBRMA_INTRINSIC_NO_OP});
    r = parse("cas");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_OK);
    EXPECT_EQ(r.names, names_t{NBRMA_INTRINSIC_CAS});
    r = parse("no_op,cas");
    EXPECT_EQ(r.names, (names_t{NBRMA_INTRINSIC_NO_OP, NBRMA_INTRINSIC_CAS}));
}

TEST(IntrinsicList, BlanksAndTabsAroundNames)
{
    for (const char *list : {" sum", "sum ", "\tsum", "sum\t", " \t sum \t ", "\t\tsum  "}) {
        parsed_list r = parse(list);
        EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_OK) << list;
        EXPECT_EQ(r.names, names_t{NBRMA_INTRINSIC_SUM}) << list;
    }
    parsed_list r = parse(" \tsum\t ,\t max ,min\t");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_OK);
    EXPECT_EQ(r.names, (names_t{NBRMA_INTRINSIC_SUM, NBRMA_INTRINSIC_MAX, NBRMA_INTRINSIC_MIN}));
}

// An empty name, a name too long to be one, or a missing comma: the glue
// reports the whole list, so bad_name stays as it was.
TEST(IntrinsicList, MalformedListsAreRefusedWhole)
{
    struct {
        const char *list;
        size_t names_before;
    } cases[] = {
        {"", 0},        {" \t ", 0},        {",sum", 0},
        {"sum,", 1},    {"sum, ", 1},       {"sum,,max", 1},
        {"sum max", 1}, {"sum\tmax", 1},    {"sum,max min", 2},
        {",", 0},       {"sum , , max", 1},
    };
    for (const auto &c : cases) {
        parsed_list r = parse(c.list);
        EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_MALFORMED) << '"' << c.list << '"';
        EXPECT_EQ(r.names.size(), c.names_before) << '"' << c.list << '"';
        EXPECT_TRUE(r.bad_name_untouched) << '"' << c.list << '"';
        EXPECT_FALSE(r.wrote_beyond) << '"' << c.list << '"';
    }
}

TEST(IntrinsicList, UnknownNameIsReported)
{
    parsed_list r = parse("foo");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_UNKNOWN_NAME);
    EXPECT_EQ(r.bad_name, "foo");
    EXPECT_TRUE(r.names.empty());

    // the name as the user wrote it, after the names before it
    r = parse("sum, Maximum ,cas");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_UNKNOWN_NAME);
    EXPECT_EQ(r.bad_name, "Maximum");
    EXPECT_EQ(r.names, names_t{NBRMA_INTRINSIC_SUM});

    // other separators are part of the name; "MPI_SUM" is not the paper's
    for (const char *name : {"sum;max", "sum\n", "MPI_SUM", "no-op", "su"}) {
        r = parse(name);
        EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_UNKNOWN_NAME) << name;
        EXPECT_EQ(r.bad_name, name);
        EXPECT_FALSE(r.wrote_beyond);
    }
}

// 15 characters fit the name buffer (reported as an unknown name), 16 do
// not (the whole list is reported).
TEST(IntrinsicList, LongestName)
{
    const std::string fifteen = "abcdefghijklmno", sixteen = fifteen + "p";
    ASSERT_EQ(fifteen.size() + 1, static_cast<size_t>(NBRMA_INTRINSIC_NAME_SIZE));

    parsed_list r = parse("sum," + fifteen);
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_UNKNOWN_NAME);
    EXPECT_EQ(r.bad_name, fifteen);
    EXPECT_FALSE(r.wrote_beyond);

    r = parse("sum," + sixteen);
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_MALFORMED);
    EXPECT_TRUE(r.bad_name_untouched);
    EXPECT_EQ(r.names, names_t{NBRMA_INTRINSIC_SUM});

    r = parse(std::string(1000, 'x'));
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_MALFORMED);
    EXPECT_TRUE(r.bad_name_untouched);
}

TEST(IntrinsicList, AsManyNamesAsTheQueryHolds)
{
    parsed_list r = parse(repeated("sum", query_capacity));
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_OK);
    EXPECT_EQ(r.names, names_t(query_capacity, NBRMA_INTRINSIC_SUM));
    EXPECT_FALSE(r.wrote_beyond);

    r = parse(repeated("sum", query_capacity + 1));
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_TOO_MANY);
    EXPECT_EQ(r.names.size(), query_capacity);
    EXPECT_TRUE(r.bad_name_untouched);
    EXPECT_FALSE(r.wrote_beyond);

    // a name past the room is checked for its form and for being known first
    r = parse(repeated("sum", query_capacity) + ",foo");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_UNKNOWN_NAME);
    EXPECT_EQ(r.bad_name, "foo");
    r = parse(repeated("sum", query_capacity) + ",");
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_MALFORMED);

    // the capacity is the caller's
    r = parse("sum,max", 1);
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_TOO_MANY);
    EXPECT_EQ(r.names, names_t{NBRMA_INTRINSIC_SUM});
    EXPECT_FALSE(r.wrote_beyond);
    r = parse("sum", 0);
    EXPECT_EQ(r.status, NBRMA_INTRINSIC_LIST_TOO_MANY);
    EXPECT_FALSE(r.wrote_beyond);
}

// Lists made of names, blanks, commas and stray characters: whatever the
// status, the parser stays inside names[] and bad_name, and what it reports
// is what the status says.
TEST(IntrinsicList, RandomListsStayInBounds)
{
    const std::vector<std::string> pieces = {
        "sum", "MAX", "no_op", "cas", "foo", ",", ",", " ", "\t", "abcdefghijklmnop",
        "abcdefghijklmno", "x", ";", ""};
    std::mt19937 rng(20260611);
    int ok = 0, malformed = 0, unknown = 0, too_many = 0;

    for (int iteration = 0; iteration < 20000; iteration++) {
        std::string list;
        size_t n_pieces = rng() % 24;
        for (size_t i = 0; i < n_pieces; i++)
            list += pieces[rng() % pieces.size()];
        if (!list.empty() && rng() % 4 == 0)
            list[rng() % list.size()] = static_cast<char>(1 + rng() % 127);
        size_t capacity = rng() % 6;

        parsed_list r = parse(list, capacity);
        ASSERT_FALSE(r.wrote_beyond) << '"' << list << '"';
        for (nbrma_intrinsic_name_t name : r.names)
            ASSERT_LT(name, NBRMA_INTRINSIC_N_NAMES);
        switch (r.status) {
        case NBRMA_INTRINSIC_LIST_OK:
            ok++;
            ASSERT_FALSE(r.names.empty());
            ASSERT_TRUE(r.bad_name_untouched);
            break;
        case NBRMA_INTRINSIC_LIST_MALFORMED:
            malformed++;
            ASSERT_TRUE(r.bad_name_untouched);
            break;
        case NBRMA_INTRINSIC_LIST_UNKNOWN_NAME:
            unknown++;
            ASSERT_FALSE(r.bad_name.empty()) << '"' << list << '"';
            ASSERT_LT(r.bad_name.size(), static_cast<size_t>(NBRMA_INTRINSIC_NAME_SIZE));
            ASSERT_NE(list.find(r.bad_name), std::string::npos);
            ASSERT_EQ(r.bad_name.find_first_of(", \t"), std::string::npos);
            break;
        case NBRMA_INTRINSIC_LIST_TOO_MANY:
            too_many++;
            ASSERT_EQ(r.names.size(), capacity);
            ASSERT_TRUE(r.bad_name_untouched);
            break;
        default:
            FAIL() << "status " << r.status;
        }
    }
    // the generator reaches every outcome
    EXPECT_GT(ok, 0);
    EXPECT_GT(malformed, 0);
    EXPECT_GT(unknown, 0);
    EXPECT_GT(too_many, 0);
}

TEST(InfoValue, Bool)
{
    struct {
        const char *text;
        bool valid, value;
    } cases[] = {
        {"true", true, true}, {"1", true, true},       {"false", true, false},
        {"0", true, false},   {"TRUE", false, false},  {"yes", false, false},
        {"", false, false},   {" true", false, false}, {"true ", false, false},
        {"01", false, false}, {"False", false, false},
    };
    for (const auto &c : cases) {
        for (bool before : {false, true}) {
            bool value = before;
            EXPECT_EQ(nbrma_parse_bool(c.text, &value), c.valid) << '"' << c.text << '"';
            // refused: *value stays as it was
            EXPECT_EQ(value, c.valid ? c.value : before) << '"' << c.text << '"';
        }
    }
}

TEST(InfoValue, Size)
{
    const size_t untouched = 4242;
    struct {
        const char *text;
        bool valid;
        size_t value;
    } cases[] = {
        {"0", true, 0},
        {"12", true, 12},
        {"007", true, 7},
        {"12a", false, 0},
        {"-1", false, 0},
        {"+1", false, 0},
        {" 1", false, 0},
        {"1 ", false, 0},
        {"", false, 0},
        {"0x10", false, 0},
        // strtoull's overflow: errno, not a wrapped value
        {"18446744073709551616", false, 0},
        {"99999999999999999999999", false, 0},
    };
    for (const auto &c : cases) {
        size_t value = untouched;
        EXPECT_EQ(nbrma_parse_size(c.text, &value), c.valid) << '"' << c.text << '"';
        EXPECT_EQ(value, c.valid ? c.value : untouched) << '"' << c.text << '"';
    }

    // 2^64 - 1: a size where size_t has 64 bits, beyond SIZE_MAX otherwise
    size_t value = untouched;
    bool fits = SIZE_MAX == UINT64_MAX;
    EXPECT_EQ(nbrma_parse_size("18446744073709551615", &value), fits);
    EXPECT_EQ(value, fits ? SIZE_MAX : untouched);
}

// The paper's four reorder keys, one flag each, all four flags.
TEST(ReorderKeys, OneFlagEachAllFour)
{
    unsigned all = 0;
    for (const nbrma_reorder_key_t &k : nbrma_reorder_keys) {
        EXPECT_EQ(0u, k.flag & (k.flag - 1)) << k.key;  // one bit
        EXPECT_EQ(0u, all & k.flag) << k.key;            // not another key's
        all |= k.flag;
    }
    EXPECT_EQ(NBRMA_REORDER_ACCESS_AFTER_ACCESS | NBRMA_REORDER_ACCESS_AFTER_EXPOSURE |
                  NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE | NBRMA_REORDER_EXPOSURE_AFTER_ACCESS,
              all);
    EXPECT_STREQ("MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", nbrma_reorder_keys[0].key);
    EXPECT_EQ(NBRMA_REORDER_ACCESS_AFTER_ACCESS, nbrma_reorder_keys[0].flag);
    EXPECT_STREQ("MPI_WIN_EXPOSURE_AFTER_ACCESS_REORDER", nbrma_reorder_keys[3].key);
    EXPECT_EQ(NBRMA_REORDER_EXPOSURE_AFTER_ACCESS, nbrma_reorder_keys[3].flag);
}

namespace {

// An info object of key/value pairs, read as the glue's MPIDI_NBRMA_info_get_bool
// reads MPICH's: only "true"/"false"/"1"/"0" are booleans.
struct fake_info {
    std::vector<std::pair<std::string, std::string>> pairs;
};

bool fake_get_bool(void *info, const char *key, bool *on)
{
    for (const auto &kv : static_cast<fake_info *>(info)->pairs)
        if (kv.first == key)
            return nbrma_parse_bool(kv.second.c_str(), on);
    return false;
}

}  // namespace

// A key set to true sets its flag, to false clears it; absent keys and values
// that are not booleans leave the flag as it was; other keys are not read.
TEST(ReorderKeys, InfoSetsAndClearsOnlyItsKeys)
{
    fake_info none;
    EXPECT_EQ(0u, nbrma_reorder_flags_from_info(0, fake_get_bool, &none));
    EXPECT_EQ(0xfu, nbrma_reorder_flags_from_info(0xf, fake_get_bool, &none));
    EXPECT_EQ(0x30u, nbrma_reorder_flags_from_info(0x30, fake_get_bool, &none));

    fake_info some{{{"MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", "true"},
                    {"MPI_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER", "false"},
                    {"MPI_WIN_ACCESS_AFTER_EXPOSURE_REORDER", "maybe"},
                    {"mpi_win_order", "true"}}};
    unsigned aaa = NBRMA_REORDER_ACCESS_AFTER_ACCESS, aae = NBRMA_REORDER_ACCESS_AFTER_EXPOSURE,
             eae = NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE, eaa = NBRMA_REORDER_EXPOSURE_AFTER_ACCESS;
    EXPECT_EQ(aaa, nbrma_reorder_flags_from_info(0, fake_get_bool, &some));
    EXPECT_EQ(aaa | aae | eaa, nbrma_reorder_flags_from_info(aae | eae | eaa, fake_get_bool, &some));
    // bits beyond the four flags are the caller's
    EXPECT_EQ(0x100u | aaa, nbrma_reorder_flags_from_info(0x100u, fake_get_bool, &some));

    fake_info all_on, all_off;
    for (const nbrma_reorder_key_t &k : nbrma_reorder_keys) {
        all_on.pairs.push_back({k.key, "1"});
        all_off.pairs.push_back({k.key, "0"});
    }
    EXPECT_EQ(aaa | aae | eae | eaa, nbrma_reorder_flags_from_info(0, fake_get_bool, &all_on));
    EXPECT_EQ(0u, nbrma_reorder_flags_from_info(aaa | aae | eae | eaa, fake_get_bool, &all_off));
}
