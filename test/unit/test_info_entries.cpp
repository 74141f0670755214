// The text of the info keys MPI_Win_get_info reports
// (ch4_netmod_rma/formats/info_entries.c) without MPI: booleans, integers to
// the extremes of a long long, and strings.

#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "info_entries.h"

namespace {

std::string value_of(const nbrma_info_entry &e)
{
    char buf[NBRMA_INFO_VALUE_BYTES];

    return nbrma_info_entry_value(&e, buf);
}

nbrma_info_entry entry(nbrma_info_type type, long long number,
                       const char *string = nullptr)
{
    nbrma_info_entry e = {};

    e.key = "k";
    e.type = type;
    e.number = number;
    e.string = string;
    return e;
}

TEST(InfoEntries, Booleans)
{
    EXPECT_EQ(value_of(entry(NBRMA_INFO_BOOL, 1)), "true");
    EXPECT_EQ(value_of(entry(NBRMA_INFO_BOOL, 7)), "true");
    EXPECT_EQ(value_of(entry(NBRMA_INFO_BOOL, 0)), "false");
}

TEST(InfoEntries, IntegersToTheExtremes)
{
    EXPECT_EQ(value_of(entry(NBRMA_INFO_INT, 0)), "0");
    EXPECT_EQ(value_of(entry(NBRMA_INFO_INT, 16384)), "16384");
    EXPECT_EQ(value_of(entry(NBRMA_INFO_INT, -3)), "-3");
    EXPECT_EQ(value_of(entry(NBRMA_INFO_INT, LLONG_MAX)), "9223372036854775807");
    EXPECT_EQ(value_of(entry(NBRMA_INFO_INT, LLONG_MIN)), "-9223372036854775808");
}

TEST(InfoEntries, StringsAreTheirOwn)
{
    const char thread[] = "thread";
    nbrma_info_entry e = entry(NBRMA_INFO_STRING, 0, thread);
    char buf[NBRMA_INFO_VALUE_BYTES];

    EXPECT_EQ(nbrma_info_entry_value(&e, buf), thread);
}

}  // namespace
