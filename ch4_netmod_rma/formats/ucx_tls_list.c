/*
 * mpich-nbrma: what a UCX_TLS value lets UCX open (ucx_tls_list.h).
 */

#include "ucx_tls_list.h"

#include <string.h>

/* UCX 1.13's aliases of the shared-memory transports (ucp_context.c) */
static const char *const shared_memory_aliases[] = { "mm", "sm", "shm" };
static const char *const shared_memory_transports[] = { "posix", "sysv", "xpmem", "knem", "cma" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Whether the list entry entry[0..len) (without its ":aux") is `name`. */
static bool entry_is(const char *entry, size_t len, const char *name)
{
    return strlen(name) == len && strncmp(entry, name, len) == 0;
}

static bool in(const char *entry, size_t len, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (entry_is(entry, len, names[i]))
            return true;
    return false;
}

/* Whether the entry names `transport`, itself or through an alias. */
static bool entry_names(const char *entry, size_t len, const char *transport)
{
    if (entry_is(entry, len, transport) || entry_is(entry, len, "all"))
        return true;
    return in(entry, len, shared_memory_aliases, COUNT(shared_memory_aliases)) &&
        in(transport, strlen(transport), shared_memory_transports,
           COUNT(shared_memory_transports));
}

/* Whether the list (without its '^') names `transport`. */
static bool list_names(const char *list, const char *transport)
{
    const char *entry = list;

    while (*entry != '\0') {
        size_t len = strcspn(entry, ",");
        const char *aux = memchr(entry, ':', len);

        if (entry_names(entry, aux ? (size_t) (aux - entry) : len, transport))
            return true;
        entry += len;
        if (*entry == ',')
            entry++;
    }
    return false;
}

bool nbrma_ucx_tls_allows_any(const char *tls, const char *const *transports, size_t n)
{
    bool excluding = tls != NULL && tls[0] == '^';

    if (tls == NULL)
        return n > 0;
    for (size_t i = 0; i < n; i++)
        if (excluding ? !list_names(tls + 1, transports[i]) : list_names(tls, transports[i]))
            return true;
    return false;
}
