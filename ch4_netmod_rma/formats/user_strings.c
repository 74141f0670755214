/*
 * mpich-nbrma: the strings the user passes (user_strings.h).
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "user_strings.h"
#include "nbrma_core.h"

/* --- MPIX_Win_op_intrinsic's list ------------------------------------------ */

static const char *const intrinsic_names[NBRMA_INTRINSIC_N_NAMES] = {
    [NBRMA_INTRINSIC_SUM] = "sum",
    [NBRMA_INTRINSIC_PROD] = "prod",
    [NBRMA_INTRINSIC_MAX] = "max",
    [NBRMA_INTRINSIC_MIN] = "min",
    [NBRMA_INTRINSIC_LAND] = "land",
    [NBRMA_INTRINSIC_LOR] = "lor",
    [NBRMA_INTRINSIC_LXOR] = "lxor",
    [NBRMA_INTRINSIC_BAND] = "band",
    [NBRMA_INTRINSIC_BOR] = "bor",
    [NBRMA_INTRINSIC_BXOR] = "bxor",
    [NBRMA_INTRINSIC_MAXLOC] = "maxloc",
    [NBRMA_INTRINSIC_MINLOC] = "minloc",
    [NBRMA_INTRINSIC_REPLACE] = "replace",
    [NBRMA_INTRINSIC_NO_OP] = "no_op",
    [NBRMA_INTRINSIC_CAS] = "cas",
};

#define SEPARATOR ','

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

nbrma_intrinsic_list_status_t nbrma_intrinsic_list_parse(const char *list,
                                                         nbrma_intrinsic_name_t * names,
                                                         size_t capacity, size_t * n,
                                                         char bad_name[NBRMA_INTRINSIC_NAME_SIZE])
{
    const char *p = list;

    *n = 0;
    for (;;) {
        char name[NBRMA_INTRINSIC_NAME_SIZE];
        size_t len = 0;
        int i;

        p = skip_blanks(p);
        while (p[len] && p[len] != SEPARATOR && !is_blank(p[len]))
            len++;
        if (len == 0 || len >= sizeof(name))
            return NBRMA_INTRINSIC_LIST_MALFORMED;
        memcpy(name, p, len);
        name[len] = '\0';
        for (i = 0; i < NBRMA_INTRINSIC_N_NAMES; i++)
            if (strcasecmp(name, intrinsic_names[i]) == 0)
                break;
        if (i == NBRMA_INTRINSIC_N_NAMES) {
            memcpy(bad_name, name, len + 1);
            return NBRMA_INTRINSIC_LIST_UNKNOWN_NAME;
        }
        if (*n == capacity)
            return NBRMA_INTRINSIC_LIST_TOO_MANY;
        names[(*n)++] = (nbrma_intrinsic_name_t) i;
        p = skip_blanks(p + len);
        if (*p == '\0')
            return NBRMA_INTRINSIC_LIST_OK;
        if (*p != SEPARATOR)
            return NBRMA_INTRINSIC_LIST_MALFORMED;
        p++;
    }
}

/* --- info values ------------------------------------------------------------ */

bool nbrma_parse_bool(const char *s, bool *value)
{
    if (!strcmp(s, "true") || !strcmp(s, "1"))
        *value = true;
    else if (!strcmp(s, "false") || !strcmp(s, "0"))
        *value = false;
    else
        return false;
    return true;
}

bool nbrma_parse_size(const char *s, size_t * value)
{
    char *end;
    unsigned long long parsed;

    /* strtoull would take blanks, a sign (and negate "-1" into a huge value) */
    if (s[0] < '0' || s[0] > '9')
        return false;
    errno = 0;
    parsed = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || parsed > SIZE_MAX)
        return false;
    *value = (size_t) parsed;
    return true;
}

/* --- the reorder flags' info keys ---------------------------------------- */

const nbrma_reorder_key_t nbrma_reorder_keys[NBRMA_N_REORDER_KEYS] = {
    {"MPI_WIN_ACCESS_AFTER_ACCESS_REORDER", NBRMA_REORDER_ACCESS_AFTER_ACCESS},
    {"MPI_WIN_ACCESS_AFTER_EXPOSURE_REORDER", NBRMA_REORDER_ACCESS_AFTER_EXPOSURE},
    {"MPI_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER", NBRMA_REORDER_EXPOSURE_AFTER_EXPOSURE},
    {"MPI_WIN_EXPOSURE_AFTER_ACCESS_REORDER", NBRMA_REORDER_EXPOSURE_AFTER_ACCESS},
};

unsigned nbrma_reorder_flags_from_info(unsigned flags, nbrma_info_bool_fn get_bool, void *info)
{
    for (size_t i = 0; i < NBRMA_N_REORDER_KEYS; i++) {
        unsigned flag = nbrma_reorder_keys[i].flag;
        bool on;

        if (get_bool(info, nbrma_reorder_keys[i].key, &on))
            flags = on ? (flags | flag) : (flags & ~flag);
    }
    return flags;
}
