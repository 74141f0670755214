/*
 * mpich-nbrma: what a UCX_TLS value lets UCX open, read as UCX 1.13 reads it,
 * so that the UCX configuration hook (ch4/hooks/ucx_config_hooks.c) sets a
 * transport's key only where that transport opens: UCX warns "invalid
 * configuration" for a key that no opened transport took (MM_SEG_SIZE over
 * UCX_TLS=tcp,self, on every worker). MPICH- and UCX-free, unit-tested
 * without MPI (test/unit/test_ucx_tls_list.cpp).
 *
 * UCX_TLS is a comma-separated list of transports and aliases ("all"; "mm",
 * "sm" and "shm" for the shared-memory transports), each name with an
 * optional ":aux" suffix; a leading '^' makes it the list of what is not
 * opened. Unset, it is "all".
 */

#ifndef NBRMA_UCX_TLS_LIST_H_INCLUDED
#define NBRMA_UCX_TLS_LIST_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the UCX_TLS value `tls` (NULL: unset) lets UCX open at least one
 * of the `n` transports named (UCX's own names: "posix", "sysv", "tcp"). */
bool nbrma_ucx_tls_allows_any(const char *tls, const char *const *transports, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_UCX_TLS_LIST_H_INCLUDED */
