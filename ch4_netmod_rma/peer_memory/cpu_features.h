/*
 * mpich-nbrma: what the processor offers beyond the x86-64 base, asked of
 * CPUID once per feature (narrow_ops.c's 16-byte compare-and-swap,
 * cpu_transactions.c's restricted transactional memory).
 */

#ifndef NBRMA_CPU_FEATURES_H_INCLUDED
#define NBRMA_CPU_FEATURES_H_INCLUDED

#include <stdbool.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* Whether CPUID leaf `leaf` (subleaf 0) sets `bit` of EBX (`in_ebx`) or
 * ECX, asked once: *known is -1 until then (racing first calls find the
 * same answer). */
static inline bool nbrma_cpu_has(int *known, unsigned leaf, bool in_ebx, unsigned bit)
{
    if (*known < 0) {
        unsigned a, b = 0, c = 0, d;
        *known = __get_cpuid_count(leaf, 0, &a, &b, &c, &d) &&
            ((in_ebx ? b : c) & (1u << bit));
    }
    return *known;
}
#endif

#endif /* NBRMA_CPU_FEATURES_H_INCLUDED */
