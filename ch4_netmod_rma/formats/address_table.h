/*
 * mpich-nbrma: a table of non-overlapping address ranges sorted by base, each
 * with an opaque payload: the allocations UCX made for this process and their
 * memory handles (ch4/memory/ucx_memory.c, which keeps the table under its
 * mutex and makes the UCX calls). Lookups bisect it (window creation, memory
 * handles, attach ask whether a range lies inside one allocation);
 * allocation and free insert and remove. MPICH- and UCX-free so that the
 * bookkeeping is tested without MPI (test/unit/test_address_table.cpp).
 */

#ifndef NBRMA_ADDRESS_TABLE_H_INCLUDED
#define NBRMA_ADDRESS_TABLE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* [base, base + size) and what the caller keeps with it (a UCX memory
 * handle: never looked at here) */
typedef struct {
    uintptr_t base;
    size_t size;
    void *payload;
} nbrma_address_range_t;

/* range[0 .. n) sorted by base; grown by doubling from 16 entries. All zero
 * is an empty table. */
typedef struct {
    nbrma_address_range_t *range;
    size_t n, cap;
} nbrma_address_table_t;

/* Adds [base, base + size) in its place (after any entry with the same
 * base). False when the table finds no memory to grow: nothing changed. */
bool nbrma_address_table_insert(nbrma_address_table_t * table, uintptr_t base, size_t size,
                                void *payload);

/* The entry that contains [addr, addr + size), or NULL: the one with the
 * greatest base <= addr, if the range ends at its end or before. A range of
 * size 0 is contained from an entry's base up to and including its end
 * (addr == base + size); the callers that must not ask so test size > 0. The
 * pointer is good until the table next changes. */
const nbrma_address_range_t *nbrma_address_table_containing(const nbrma_address_table_t * table,
                                                            uintptr_t addr, size_t size);

/* Removes the entry whose base is `base` (of several, the last inserted),
 * giving its payload in *payload; false (nothing done, *payload untouched)
 * when no entry begins there. */
bool nbrma_address_table_remove(nbrma_address_table_t * table, uintptr_t base, void **payload);

/* Gives the table's memory back and leaves it empty; the payloads are the
 * caller's (it walks range[0 .. n) first to release them). */
void nbrma_address_table_free(nbrma_address_table_t * table);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_ADDRESS_TABLE_H_INCLUDED */
