// Which accumulates go to which atomics (peer_memory/atomic_rules.h), without MPI:
// every (kind, element class, size, operation, wide, fetch) against a table
// written from the header's rules, not from the code, the paths' relations to
// each other, and a few accumulates as an application would make them.

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>

extern "C" {
#include "atomic_rules.h"
}

namespace {

const nbrma_atomic_kind_t all_kinds[] = {NBRMA_ATOMIC_ACCUMULATE, NBRMA_ATOMIC_GET_ACCUMULATE,
                                         NBRMA_ATOMIC_FETCH_AND_OP,
                                         NBRMA_ATOMIC_COMPARE_AND_SWAP};
const nbrma_element_class_t all_classes[] = {NBRMA_CLASS_NONE, NBRMA_CLASS_CHAR,
                                             NBRMA_CLASS_SIGNED, NBRMA_CLASS_UNSIGNED,
                                             NBRMA_CLASS_FLOAT};
// the sizes of basic types, and some no basic type has
const unsigned all_sizes[] = {0, 1, 2, 3, 4, 8, 16};
constexpr int n_reduce_ops = NBRMA_REDUCE_OTHER + 1;

// The header's lists, one row per operation. NONE: the path does not take it.
constexpr int NONE = -1;
struct op_row {
    nbrma_reduce_op_t op;
    int ucx_op;           // UCX's operation (UCX's atomics and narrow ones take it)
    int lane_op;          // the lane-wise update, on integers of every size
    int wide_integer_op;  // wide only, integers; MIN and MAX by signedness, not MPI_CHAR's
    int float_op;         // wide only, float and double
    bool fetch_only;      // MPI_NO_OP: only in the kinds that fetch
};
const op_row rows[n_reduce_ops] = {
    {NBRMA_REDUCE_SUM, NBRMA_UCX_ADD, NBRMA_NARROW_SUM, NONE, NBRMA_ELEMENT_FLOAT_SUM, false},
    {NBRMA_REDUCE_PROD, NONE, NONE, NBRMA_ELEMENT_PROD, NBRMA_ELEMENT_FLOAT_PROD, false},
    {NBRMA_REDUCE_MAX, NONE, NONE, NBRMA_ELEMENT_MAX_SIGNED, NBRMA_ELEMENT_FLOAT_MAX, false},
    {NBRMA_REDUCE_MIN, NONE, NONE, NBRMA_ELEMENT_MIN_SIGNED, NBRMA_ELEMENT_FLOAT_MIN, false},
    {NBRMA_REDUCE_LAND, NONE, NONE, NONE, NONE, false},
    {NBRMA_REDUCE_LOR, NONE, NONE, NONE, NONE, false},
    {NBRMA_REDUCE_LXOR, NONE, NONE, NONE, NONE, false},
    {NBRMA_REDUCE_BAND, NBRMA_UCX_AND, NBRMA_NARROW_BAND, NONE, NONE, false},
    {NBRMA_REDUCE_BOR, NBRMA_UCX_OR, NBRMA_NARROW_BOR, NONE, NONE, false},
    {NBRMA_REDUCE_BXOR, NBRMA_UCX_XOR, NBRMA_NARROW_BXOR, NONE, NONE, false},
    {NBRMA_REDUCE_REPLACE, NBRMA_UCX_SWAP, NBRMA_NARROW_REPLACE, NONE, NBRMA_NARROW_REPLACE,
     false},
    {NBRMA_REDUCE_NO_OP, NBRMA_UCX_OR, NBRMA_NARROW_NO_OP, NONE, NBRMA_NARROW_NO_OP, true},
    {NBRMA_REDUCE_MAXLOC, NONE, NONE, NONE, NONE, false},
    {NBRMA_REDUCE_MINLOC, NONE, NONE, NONE, NONE, false},
    {NBRMA_REDUCE_OTHER, NONE, NONE, NONE, NONE, false},
};

bool fetches(nbrma_atomic_kind_t kind)
{
    return kind != NBRMA_ATOMIC_ACCUMULATE;
}

bool integer_of(nbrma_element_t e, std::initializer_list<unsigned> sizes)
{
    bool size_in = false;
    for (unsigned s : sizes)
        size_in = size_in || e.size == s;
    return size_in && (e.cls == NBRMA_CLASS_CHAR || e.cls == NBRMA_CLASS_SIGNED ||
                       e.cls == NBRMA_CLASS_UNSIGNED);
}

bool float_or_double(nbrma_element_t e)
{
    return e.cls == NBRMA_CLASS_FLOAT && (e.size == 4 || e.size == 8);
}

// "UCX's atomics: signed and unsigned integers of 4 and 8 bytes"
bool ucx_element(nbrma_element_t e)
{
    return (e.cls == NBRMA_CLASS_SIGNED || e.cls == NBRMA_CLASS_UNSIGNED) &&
           (e.size == 4 || e.size == 8);
}

// "integers of 1 and 2 bytes, and wide also of 4 and 8, float and double"
unsigned cpu_size(nbrma_element_t e, bool wide)
{
    if (integer_of(e, {1, 2}) || (wide && (integer_of(e, {4, 8}) || float_or_double(e))))
        return e.size;
    return 0;
}

int expected_ucx_op(nbrma_atomic_kind_t kind, nbrma_reduce_op_t op)
{
    if (kind == NBRMA_ATOMIC_COMPARE_AND_SWAP)
        return NBRMA_UCX_CSWAP;
    if (rows[op].fetch_only && !fetches(kind))
        return NONE;
    return rows[op].ucx_op;
}

// The CPU's update of `op` on `e`, NONE if they do not apply it.
int expected_cpu_op(nbrma_reduce_op_t op, nbrma_element_t e, bool fetch, bool wide)
{
    const op_row &row = rows[op];
    if (cpu_size(e, wide) == 0 || (row.fetch_only && !fetch))
        return NONE;
    if (e.cls == NBRMA_CLASS_FLOAT)
        return row.float_op;
    if (row.lane_op != NONE)
        return row.lane_op;
    if (!wide || row.wide_integer_op == NONE)
        return NONE;
    if (op == NBRMA_REDUCE_MIN || op == NBRMA_REDUCE_MAX) {
        if (e.cls == NBRMA_CLASS_CHAR)
            return NONE;
        if (e.cls == NBRMA_CLASS_UNSIGNED)
            return op == NBRMA_REDUCE_MIN ? NBRMA_ELEMENT_MIN_UNSIGNED : NBRMA_ELEMENT_MAX_UNSIGNED;
    }
    return row.wide_integer_op;
}

bool expected_cpu_routed(nbrma_atomic_kind_t kind, nbrma_element_t e, nbrma_reduce_op_t op,
                         bool wide)
{
    if (kind == NBRMA_ATOMIC_COMPARE_AND_SWAP)
        return cpu_size(e, wide) != 0 && e.cls != NBRMA_CLASS_FLOAT;
    return expected_cpu_op(op, e, fetches(kind), wide) != NONE;
}

std::string describe(nbrma_atomic_kind_t kind, nbrma_element_t e, int op, bool wide)
{
    std::ostringstream s;
    s << "kind " << kind << " class " << e.cls << " size " << e.size << " op " << op << " wide "
      << wide;
    return s.str();
}

template <class F> void for_each_element(F f)
{
    for (nbrma_element_class_t cls : all_classes)
        for (unsigned size : all_sizes)
            f(nbrma_element_t{cls, size});
}

nbrma_element_t element(nbrma_element_class_t cls, unsigned size)
{
    return nbrma_element_t{cls, size};
}

const nbrma_element_t int8{NBRMA_CLASS_SIGNED, 1}, mpi_char{NBRMA_CLASS_CHAR, 1},
    uint16{NBRMA_CLASS_UNSIGNED, 2}, int32{NBRMA_CLASS_SIGNED, 4},
    uint32{NBRMA_CLASS_UNSIGNED, 4}, int64{NBRMA_CLASS_SIGNED, 8}, flt{NBRMA_CLASS_FLOAT, 4},
    dbl{NBRMA_CLASS_FLOAT, 8}, none{NBRMA_CLASS_NONE, 0};

}  // namespace

TEST(AtomicRules, UcxTable)
{
    for (nbrma_atomic_kind_t kind : all_kinds)
        for (int o = 0; o < n_reduce_ops; o++) {
            auto op = static_cast<nbrma_reduce_op_t>(o);
            nbrma_ucx_op_t ucx_op{};
            int expected = expected_ucx_op(kind, op);
            bool has = nbrma_ucx_atomic_op(kind, op, &ucx_op);
            EXPECT_EQ(has, expected != NONE) << describe(kind, none, o, false);
            if (has) {
                EXPECT_EQ(ucx_op, expected) << describe(kind, none, o, false);
            }
            for_each_element([&](nbrma_element_t e) {
                EXPECT_EQ(nbrma_ucx_atomics_routed(kind, e, op), expected != NONE && ucx_element(e))
                    << describe(kind, e, o, false);
            });
        }
    for_each_element([](nbrma_element_t e) {
        EXPECT_EQ(nbrma_ucx_atomic_size(e), ucx_element(e) ? e.size : 0u)
            << describe(NBRMA_ATOMIC_ACCUMULATE, e, 0, false);
    });
}

TEST(AtomicRules, CpuAndNarrowTable)
{
    for_each_element([](nbrma_element_t e) {
        for (bool wide : {false, true})
            EXPECT_EQ(nbrma_cpu_atomic_size(e, wide), cpu_size(e, wide))
                << describe(NBRMA_ATOMIC_ACCUMULATE, e, 0, wide);
        EXPECT_EQ(nbrma_narrow_atomic_size(e), integer_of(e, {1, 2}) ? e.size : 0u)
            << describe(NBRMA_ATOMIC_ACCUMULATE, e, 0, false);
        for (int o = 0; o < n_reduce_ops; o++) {
            auto op = static_cast<nbrma_reduce_op_t>(o);
            for (bool wide : {false, true}) {
                for (bool fetch : {false, true}) {
                    nbrma_narrow_op_t got{};
                    int expected = expected_cpu_op(op, e, fetch, wide);
                    bool has = nbrma_cpu_atomic_op(op, e, fetch, wide, &got);
                    EXPECT_EQ(has, expected != NONE)
                        << describe(NBRMA_ATOMIC_ACCUMULATE, e, o, wide) << " fetch " << fetch;
                    if (has) {
                        EXPECT_EQ(got, expected)
                            << describe(NBRMA_ATOMIC_ACCUMULATE, e, o, wide) << " fetch " << fetch;
                    }
                }
                for (nbrma_atomic_kind_t kind : all_kinds)
                    EXPECT_EQ(nbrma_cpu_atomics_routed(kind, e, op, wide),
                              expected_cpu_routed(kind, e, op, wide))
                        << describe(kind, e, o, wide);
            }
        }
    });
}

TEST(AtomicRules, LaneWiseOperations)
{
    for (int o = 0; o < n_reduce_ops; o++) {
        auto op = static_cast<nbrma_reduce_op_t>(o);
        for (bool fetch : {false, true}) {
            nbrma_narrow_op_t got{};
            int expected = rows[o].fetch_only && !fetch ? NONE : rows[o].lane_op;
            bool has = nbrma_narrow_atomic_op(op, fetch, &got);
            EXPECT_EQ(has, expected != NONE) << "op " << o << " fetch " << fetch;
            if (has) {
                EXPECT_EQ(got, expected) << "op " << o << " fetch " << fetch;
                EXPECT_TRUE(nbrma_op_lane_wise(got)) << "op " << o;
            }
        }
    }
}

// An accumulate at hand: as a fetching kind would, whatever its kind
// (MPI_NO_OP taken).
TEST(AtomicRules, ApplyTable)
{
    for_each_element([](nbrma_element_t target) {
        for (int o = 0; o < n_reduce_ops; o++)
            for (bool wide : {false, true}) {
                auto op = static_cast<nbrma_reduce_op_t>(o);
                nbrma_narrow_op_t got{};
                int update = expected_cpu_op(op, target, true, wide);
                unsigned size = nbrma_cpu_atomics_apply_size(op, target, wide, &got);
                EXPECT_EQ(size, update == NONE ? 0 : cpu_size(target, wide))
                    << describe(NBRMA_ATOMIC_ACCUMULATE, target, o, wide);
                if (size != 0) {
                    EXPECT_EQ(got, update) << describe(NBRMA_ATOMIC_ACCUMULATE, target, o, wide);
                }
            }
    });
}

// Narrow atomics are the CPU's without wide; every accumulate UCX or narrow
// atomics take, the CPU's take wide (they update the same memory atomically).
TEST(AtomicRules, PathsNestInEachOther)
{
    for_each_element([](nbrma_element_t e) {
        for (nbrma_atomic_kind_t kind : all_kinds)
            for (int o = 0; o < n_reduce_ops; o++) {
                auto op = static_cast<nbrma_reduce_op_t>(o);
                bool narrow = nbrma_cpu_atomics_routed(kind, e, op, false);
                bool wide = nbrma_cpu_atomics_routed(kind, e, op, true);
                bool ucx = nbrma_ucx_atomics_routed(kind, e, op);
                if (narrow || ucx) {
                    EXPECT_TRUE(wide) << describe(kind, e, o, true);
                }
                EXPECT_FALSE(narrow && ucx) << describe(kind, e, o, false);
                if (narrow) {
                    EXPECT_NE(nbrma_narrow_atomic_size(e), 0u) << describe(kind, e, o, false);
                }
            }
    });
}

TEST(AtomicRules, Int32SumGoesToUcx)
{
    nbrma_ucx_op_t ucx_op;
    for (nbrma_atomic_kind_t kind : all_kinds)
        EXPECT_TRUE(nbrma_ucx_atomics_routed(kind, int32, NBRMA_REDUCE_SUM)) << kind;
    ASSERT_TRUE(nbrma_ucx_atomic_op(NBRMA_ATOMIC_ACCUMULATE, NBRMA_REDUCE_SUM, &ucx_op));
    EXPECT_EQ(ucx_op, NBRMA_UCX_ADD);
    EXPECT_EQ(nbrma_ucx_atomic_size(int32), 4u);
    EXPECT_EQ(nbrma_ucx_atomic_size(int64), 8u);
    EXPECT_FALSE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, int32, NBRMA_REDUCE_SUM, false));
}

TEST(AtomicRules, MpiCharMinMaxStayMpichs)
{
    for (nbrma_reduce_op_t op : {NBRMA_REDUCE_MAX, NBRMA_REDUCE_MIN})
        for (nbrma_atomic_kind_t kind : all_kinds) {
            if (kind == NBRMA_ATOMIC_COMPARE_AND_SWAP)
                continue;
            EXPECT_FALSE(nbrma_ucx_atomics_routed(kind, mpi_char, op));
            EXPECT_FALSE(nbrma_cpu_atomics_routed(kind, mpi_char, op, false));
            EXPECT_FALSE(nbrma_cpu_atomics_routed(kind, mpi_char, op, true));
            // the same size with a signedness: the CPU's, wide
            EXPECT_TRUE(nbrma_cpu_atomics_routed(kind, int8, op, true));
        }
    // MPI_CHAR's SUM is narrow
    EXPECT_TRUE(
        nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, mpi_char, NBRMA_REDUCE_SUM, false));
}

TEST(AtomicRules, FloatAndDoubleOnlyOnTheCpu)
{
    nbrma_narrow_op_t got;
    for (nbrma_element_t e : {flt, dbl}) {
        EXPECT_FALSE(nbrma_ucx_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, e, NBRMA_REDUCE_SUM));
        EXPECT_FALSE(nbrma_ucx_atomics_routed(NBRMA_ATOMIC_FETCH_AND_OP, e, NBRMA_REDUCE_REPLACE));
        EXPECT_FALSE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, e, NBRMA_REDUCE_SUM, false));
        EXPECT_TRUE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, e, NBRMA_REDUCE_SUM, true));
        ASSERT_TRUE(nbrma_cpu_atomic_op(NBRMA_REDUCE_SUM, e, false, true, &got));
        EXPECT_EQ(got, NBRMA_ELEMENT_FLOAT_SUM);
        // bits are replaced or read whole; not and-ed
        ASSERT_TRUE(nbrma_cpu_atomic_op(NBRMA_REDUCE_REPLACE, e, false, true, &got));
        EXPECT_EQ(got, NBRMA_NARROW_REPLACE);
        EXPECT_FALSE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, e, NBRMA_REDUCE_BAND, true));
        // MPI allows no compare-and-swap of floating types
        EXPECT_FALSE(
            nbrma_cpu_atomics_routed(NBRMA_ATOMIC_COMPARE_AND_SWAP, e, NBRMA_REDUCE_OTHER, true));
    }
}

TEST(AtomicRules, TwoByteBandIsNarrow)
{
    nbrma_narrow_op_t got;
    EXPECT_EQ(nbrma_narrow_atomic_size(uint16), 2u);
    EXPECT_TRUE(
        nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, uint16, NBRMA_REDUCE_BAND, false));
    ASSERT_TRUE(nbrma_narrow_atomic_op(NBRMA_REDUCE_BAND, false, &got));
    EXPECT_EQ(got, NBRMA_NARROW_BAND);
    EXPECT_FALSE(nbrma_ucx_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, uint16, NBRMA_REDUCE_BAND));
    // narrow atomics have no element-wise updates
    EXPECT_FALSE(
        nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, uint16, NBRMA_REDUCE_MAX, false));
    EXPECT_EQ(nbrma_narrow_atomic_size(int32), 0u);
}

TEST(AtomicRules, NoOpOnlyWhereTheKindFetches)
{
    nbrma_ucx_op_t ucx_op;
    nbrma_narrow_op_t got;
    EXPECT_FALSE(nbrma_ucx_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, int64, NBRMA_REDUCE_NO_OP));
    EXPECT_FALSE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, int8, NBRMA_REDUCE_NO_OP, true));
    ASSERT_TRUE(nbrma_ucx_atomic_op(NBRMA_ATOMIC_GET_ACCUMULATE, NBRMA_REDUCE_NO_OP, &ucx_op));
    EXPECT_EQ(ucx_op, NBRMA_UCX_OR);    // with 0: an atomic load
    EXPECT_TRUE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_FETCH_AND_OP, dbl, NBRMA_REDUCE_NO_OP, true));
    // an accumulate at hand takes it, whatever its kind
    EXPECT_EQ(nbrma_cpu_atomics_apply_size(NBRMA_REDUCE_NO_OP, int8, false, &got), 1u);
    EXPECT_EQ(got, NBRMA_NARROW_NO_OP);
    EXPECT_EQ(nbrma_cpu_atomics_apply_size(NBRMA_REDUCE_NO_OP, dbl, true, &got), 8u);
}

TEST(AtomicRules, CompareAndSwapAsksNoOperation)
{
    nbrma_ucx_op_t ucx_op;
    for (int o = 0; o < n_reduce_ops; o++) {
        auto op = static_cast<nbrma_reduce_op_t>(o);
        ASSERT_TRUE(nbrma_ucx_atomic_op(NBRMA_ATOMIC_COMPARE_AND_SWAP, op, &ucx_op)) << o;
        EXPECT_EQ(ucx_op, NBRMA_UCX_CSWAP) << o;
        EXPECT_TRUE(nbrma_ucx_atomics_routed(NBRMA_ATOMIC_COMPARE_AND_SWAP, uint32, op)) << o;
        EXPECT_TRUE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_COMPARE_AND_SWAP, mpi_char, op, false))
            << o;
        EXPECT_FALSE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_COMPARE_AND_SWAP, int64, op, false))
            << o;
        EXPECT_TRUE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_COMPARE_AND_SWAP, int64, op, true)) << o;
    }
}

TEST(AtomicRules, WideIntegerMinMaxBySignedness)
{
    nbrma_narrow_op_t got;
    ASSERT_TRUE(nbrma_cpu_atomic_op(NBRMA_REDUCE_MIN, uint32, false, true, &got));
    EXPECT_EQ(got, NBRMA_ELEMENT_MIN_UNSIGNED);
    ASSERT_TRUE(nbrma_cpu_atomic_op(NBRMA_REDUCE_MAX, int64, false, true, &got));
    EXPECT_EQ(got, NBRMA_ELEMENT_MAX_SIGNED);
    ASSERT_TRUE(nbrma_cpu_atomic_op(NBRMA_REDUCE_PROD, mpi_char, false, true, &got));
    EXPECT_EQ(got, NBRMA_ELEMENT_PROD);
    EXPECT_FALSE(nbrma_ucx_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, int64, NBRMA_REDUCE_MAX));
}

TEST(AtomicRules, NothingElseAnywhere)
{
    for (nbrma_reduce_op_t op : {NBRMA_REDUCE_LAND, NBRMA_REDUCE_LOR, NBRMA_REDUCE_LXOR,
                                 NBRMA_REDUCE_MAXLOC, NBRMA_REDUCE_MINLOC, NBRMA_REDUCE_OTHER})
        for (nbrma_element_t e : {int8, int32, int64, dbl})
            for (nbrma_atomic_kind_t kind : {NBRMA_ATOMIC_ACCUMULATE, NBRMA_ATOMIC_GET_ACCUMULATE,
                                             NBRMA_ATOMIC_FETCH_AND_OP}) {
                EXPECT_FALSE(nbrma_ucx_atomics_routed(kind, e, op));
                EXPECT_FALSE(nbrma_cpu_atomics_routed(kind, e, op, true));
            }
    // no basic type the atomics know, or a size none has
    for (nbrma_element_t e : {none, element(NBRMA_CLASS_SIGNED, 16), element(NBRMA_CLASS_FLOAT, 2)})
        EXPECT_FALSE(nbrma_cpu_atomics_routed(NBRMA_ATOMIC_ACCUMULATE, e, NBRMA_REDUCE_SUM, true));
}

TEST(AtomicRules, UcxAtomicCountIsOnePerElement)
{
    int64_t compare = 0, result = 0;

    EXPECT_EQ(nbrma_ucx_atomic_count(NBRMA_ATOMIC_ACCUMULATE, 12, 4, nullptr, nullptr), 3u);
    EXPECT_EQ(nbrma_ucx_atomic_count(NBRMA_ATOMIC_GET_ACCUMULATE, 64, 8, &compare, &result), 8u);
    EXPECT_EQ(nbrma_ucx_atomic_count(NBRMA_ATOMIC_ACCUMULATE, 0, 4, nullptr, nullptr), 0u);
    // no element size: none, whatever the bytes
    EXPECT_EQ(nbrma_ucx_atomic_count(NBRMA_ATOMIC_ACCUMULATE, 16, 0, nullptr, nullptr), 0u);
    EXPECT_EQ(nbrma_ucx_atomic_count(NBRMA_ATOMIC_COMPARE_AND_SWAP, 8, 8, &compare, &result), 1u);
}

TEST(AtomicRules, UcxCompareAndSwapWhoseResultIsItsCompareGoesToNone)
{
    int64_t both = 0;

    EXPECT_EQ(nbrma_ucx_atomic_count(NBRMA_ATOMIC_COMPARE_AND_SWAP, 8, 8, &both, &both), 0u);
    // the other kinds read no compare buffer: the same address changes nothing
    EXPECT_EQ(nbrma_ucx_atomic_count(NBRMA_ATOMIC_FETCH_AND_OP, 8, 8, &both, &both), 1u);
}

TEST(AtomicRules, UcxCompareAndSwapComparesWithTheOperandAndSwapsInTheReply)
{
    int64_t origin = 7, compare = 3, result = -1;
    const char *operand = nullptr, *reply = nullptr;

    ASSERT_TRUE(nbrma_ucx_single_buffers(NBRMA_ATOMIC_COMPARE_AND_SWAP, false, &origin, &compare,
                                         &result, sizeof(result), &operand, &reply));
    EXPECT_EQ(operand, reinterpret_cast<const char *>(&compare));
    EXPECT_EQ(reply, reinterpret_cast<const char *>(&result));
    EXPECT_EQ(result, 7);       // the new value, for UCX to swap in
    EXPECT_EQ(origin, 7);
    EXPECT_EQ(compare, 3);
}

TEST(AtomicRules, UcxFetchAndOpOperandIsTheOriginOrZeros)
{
    int32_t origin = 5, result = -1;
    const char *operand = nullptr, *reply = nullptr;

    ASSERT_TRUE(nbrma_ucx_single_buffers(NBRMA_ATOMIC_FETCH_AND_OP, false, &origin, nullptr,
                                         &result, sizeof(result), &operand, &reply));
    EXPECT_EQ(operand, reinterpret_cast<const char *>(&origin));
    EXPECT_EQ(reply, reinterpret_cast<const char *>(&result));
    EXPECT_EQ(result, -1);      // untouched: UCX writes the fetched value
    // MPI_NO_OP: an or with the caller's zeros, the origin is not read
    operand = reinterpret_cast<const char *>(&origin);
    ASSERT_TRUE(nbrma_ucx_single_buffers(NBRMA_ATOMIC_FETCH_AND_OP, true, &origin, nullptr,
                                         &result, sizeof(result), &operand, &reply));
    EXPECT_EQ(operand, nullptr);
    EXPECT_EQ(reply, reinterpret_cast<const char *>(&result));
}

TEST(AtomicRules, UcxBuffersOfAccumulatesAreTheGluesToMake)
{
    int64_t origin = 1, result = 2;
    const char *operand = nullptr, *reply = nullptr;

    for (nbrma_atomic_kind_t kind : {NBRMA_ATOMIC_ACCUMULATE, NBRMA_ATOMIC_GET_ACCUMULATE}) {
        EXPECT_FALSE(nbrma_ucx_single_buffers(kind, false, &origin, nullptr, &result,
                                              sizeof(result), &operand, &reply));
        EXPECT_EQ(operand, nullptr);
        EXPECT_EQ(reply, nullptr);
        EXPECT_EQ(result, 2);
    }
}

// The narrow plan takes exactly what narrow atomics route (the CPU's without
// wide), up to max_elements elements and at least one; a compare-and-swap
// reads no operation.
TEST(AtomicRules, NarrowPlanTakesTheNarrowRoutedAccumulatesOfAtMostMaxElements)
{
    for (nbrma_atomic_kind_t kind : all_kinds)
        for_each_element([&](nbrma_element_t e) {
            for (int o = 0; o < n_reduce_ops; o++) {
                nbrma_reduce_op_t op = static_cast<nbrma_reduce_op_t>(o);
                bool routed = nbrma_cpu_atomics_routed(kind, e, op, false);
                nbrma_narrow_plan_t plan{};
                size_t max = 16;

                for (size_t n : {0, 1, 16, 17}) {
                    bool planned = nbrma_narrow_plan(kind, op, e, n * e.size, max, &plan);
                    EXPECT_EQ(planned, routed && n >= 1 && n <= max)
                        << describe(kind, e, o, false) << " n " << n;
                    if (planned) {
                        EXPECT_EQ(plan.esize, e.size) << describe(kind, e, o, false);
                        EXPECT_EQ(plan.n, n) << describe(kind, e, o, false);
                    }
                }
            }
        });
}

TEST(AtomicRules, NarrowPlanOfEachKindReadsItsBuffersInPlaceOrAsOneElement)
{
    nbrma_narrow_plan_t plan{};

    // MPI_Accumulate reads its origin as n elements and writes no result
    ASSERT_TRUE(nbrma_narrow_plan(NBRMA_ATOMIC_ACCUMULATE, NBRMA_REDUCE_SUM, mpi_char, 3, 16,
                                  &plan));
    EXPECT_EQ(plan.op, NBRMA_NARROW_SUM);
    EXPECT_EQ(plan.esize, 1u);
    EXPECT_EQ(plan.n, 3u);
    EXPECT_TRUE(plan.origin_in_place);
    EXPECT_FALSE(plan.result_in_place);
    // MPI_Get_accumulate writes its result too, and with MPI_NO_OP reads no operand
    ASSERT_TRUE(nbrma_narrow_plan(NBRMA_ATOMIC_GET_ACCUMULATE, NBRMA_REDUCE_BXOR, uint16, 8, 16,
                                  &plan));
    EXPECT_EQ(plan.op, NBRMA_NARROW_BXOR);
    EXPECT_EQ(plan.n, 4u);
    EXPECT_TRUE(plan.origin_in_place);
    EXPECT_TRUE(plan.result_in_place);
    ASSERT_TRUE(nbrma_narrow_plan(NBRMA_ATOMIC_GET_ACCUMULATE, NBRMA_REDUCE_NO_OP, int8, 2, 16,
                                  &plan));
    EXPECT_EQ(plan.op, NBRMA_NARROW_NO_OP);
    EXPECT_FALSE(plan.origin_in_place);
    EXPECT_TRUE(plan.result_in_place);
    // the single-element kinds hand their one element as it is
    ASSERT_TRUE(nbrma_narrow_plan(NBRMA_ATOMIC_FETCH_AND_OP, NBRMA_REDUCE_REPLACE, uint16, 2, 16,
                                  &plan));
    EXPECT_EQ(plan.op, NBRMA_NARROW_REPLACE);
    EXPECT_FALSE(plan.origin_in_place);
    EXPECT_FALSE(plan.result_in_place);
    // a compare-and-swap asks no operation: REPLACE, whatever `op` says
    ASSERT_TRUE(nbrma_narrow_plan(NBRMA_ATOMIC_COMPARE_AND_SWAP, NBRMA_REDUCE_OTHER, int8, 1, 16,
                                  &plan));
    EXPECT_EQ(plan.op, NBRMA_NARROW_REPLACE);
    EXPECT_EQ(plan.n, 1u);
    EXPECT_FALSE(plan.origin_in_place);
    EXPECT_FALSE(plan.result_in_place);
    // not narrow: MPI_Accumulate's MPI_NO_OP, 4-byte integers, float
    EXPECT_FALSE(nbrma_narrow_plan(NBRMA_ATOMIC_ACCUMULATE, NBRMA_REDUCE_NO_OP, int8, 1, 16,
                                   &plan));
    EXPECT_FALSE(nbrma_narrow_plan(NBRMA_ATOMIC_ACCUMULATE, NBRMA_REDUCE_SUM, int32, 4, 16,
                                   &plan));
    EXPECT_FALSE(nbrma_narrow_plan(NBRMA_ATOMIC_COMPARE_AND_SWAP, NBRMA_REDUCE_OTHER, flt, 4, 16,
                                   &plan));
}
