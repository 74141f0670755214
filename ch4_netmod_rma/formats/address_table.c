/*
 * mpich-nbrma: address ranges sorted by base (address_table.h).
 */

#include "address_table.h"
#include "grow_one.h"
#include <stdlib.h>
#include <string.h>

/* The index of the first entry whose base is above `addr`. */
static size_t upper_bound(const nbrma_address_table_t * table, uintptr_t addr)
{
    size_t lo = 0, hi = table->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (table->range[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool nbrma_address_table_insert(nbrma_address_table_t * table, uintptr_t base, size_t size,
                                void *payload)
{
    if (!nbrma_grow_one((void **) &table->range, table->n, &table->cap, sizeof(*table->range),
                        16))
        return false;
    size_t i = upper_bound(table, base);
    memmove(&table->range[i + 1], &table->range[i], (table->n - i) * sizeof(*table->range));
    table->range[i] = (nbrma_address_range_t) {.base = base,.size = size,.payload = payload };
    table->n++;
    return true;
}

const nbrma_address_range_t *nbrma_address_table_containing(const nbrma_address_table_t * table,
                                                            uintptr_t addr, size_t size)
{
    size_t i = upper_bound(table, addr);

    if (i == 0)
        return NULL;
    const nbrma_address_range_t *r = &table->range[i - 1];
    /* addr >= r->base here: the differences cannot wrap */
    if (addr - r->base > r->size || size > r->size - (addr - r->base))
        return NULL;
    return r;
}

bool nbrma_address_table_remove(nbrma_address_table_t * table, uintptr_t base, void **payload)
{
    size_t i = upper_bound(table, base);

    if (i == 0 || table->range[i - 1].base != base)
        return false;
    *payload = table->range[i - 1].payload;
    memmove(&table->range[i - 1], &table->range[i], (table->n - i) * sizeof(*table->range));
    table->n--;
    return true;
}

void nbrma_address_table_free(nbrma_address_table_t * table)
{
    free(table->range);
    table->range = NULL;
    table->n = table->cap = 0;
}
