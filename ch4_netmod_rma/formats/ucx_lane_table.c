/*
 * mpich-nbrma: UCX's lane table read, and its answers kept
 * (ucx_lane_table.h).
 */

#include "ucx_lane_table.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The first `needle` within [from, end), or NULL; "" is found at `from`.
 * The text is the caller's and only read, so a line is not cut out of it
 * with a NUL: every search stops at the line's end instead. */
static const char *find_within(const char *from, const char *end, const char *needle)
{
    size_t len = strlen(needle);

    for (; (size_t) (end - from) >= len; from++)
        if (memcmp(from, needle, len) == 0)
            return from;
    return NULL;
}

/* The transport of a lane line [lane, end) from its "lane[" on, "posix" of
 * "lane[1]: 4:posix/memory.0": *name and *len, false if it does not read so. */
static bool transport_of(const char *lane, const char *end, const char **name, size_t *len)
{
    const char *colon = memchr(lane, ':', (size_t) (end - lane)), *slash;

    slash = colon ? memchr(colon, '/', (size_t) (end - colon)) : NULL;
    if (!slash)
        return false;
    colon++;
    /* stops at the slash at the latest, which is none of these */
    while (*colon == ' ' || (*colon >= '0' && *colon <= '9') || *colon == ':')
        colon++;
    *name = colon;
    *len = (size_t) (slash - colon);
    return slash > colon;
}

static bool is_one_of(const char *name, size_t len, const char *const *transports, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (len == strlen(transports[i]) && strncmp(name, transports[i], len) == 0)
            return true;
    return false;
}

void nbrma_ucx_lane_table_count(const char *text, const char *usage,
                                const char *const *transports, size_t n, int *lanes, int *on)
{
    *lanes = *on = 0;
    if (text == NULL)
        return;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n'), *lane, *name;
        size_t len;

        if (end == NULL)
            end = line + strlen(line);
        lane = find_within(line, end, "lane[");
        if (lane && find_within(line, end, usage)) {
            ++*lanes;
            if (transport_of(lane, end, &name, &len) && is_one_of(name, len, transports, n))
                ++*on;
        }
        line = *end ? end + 1 : end;
    }
}

static size_t slot_of(const nbrma_ucx_lane_answer_t * slot, size_t cap, const void *endpoint,
                      const char *usage, const char *const *transports)
{
    uintptr_t h = (uintptr_t) endpoint * 0x9E3779B97F4A7C15u ^ (uintptr_t) usage * 31u ^
        (uintptr_t) transports;
    size_t i = (size_t) (h ^ (h >> 29)) & (cap - 1);

    while (slot[i].endpoint &&
           !(slot[i].endpoint == endpoint && slot[i].usage == usage &&
             slot[i].transports == transports))
        i = (i + 1) & (cap - 1);
    return i;
}

bool nbrma_ucx_lane_answers_find(const nbrma_ucx_lane_answers_t * answers, const void *endpoint,
                                 const char *usage, const char *const *transports, int *lanes,
                                 int *on)
{
    const nbrma_ucx_lane_answer_t *a;

    if (answers->slot == NULL || endpoint == NULL)
        return false;
    a = &answers->slot[slot_of(answers->slot, answers->cap, endpoint, usage, transports)];
    if (a->endpoint == NULL)
        return false;
    *lanes = a->lanes;
    *on = a->on;
    return true;
}

void nbrma_ucx_lane_answers_keep(nbrma_ucx_lane_answers_t * answers, const void *endpoint,
                                 const char *usage, const char *const *transports, int lanes,
                                 int on)
{
    nbrma_ucx_lane_answer_t *a;

    /* a NULL endpoint marks an empty slot */
    if (endpoint == NULL)
        return;
    if (2 * (answers->used + 1) > answers->cap) {
        size_t cap = answers->cap ? 2 * answers->cap : 64;
        nbrma_ucx_lane_answer_t *old = answers->slot, *grown = calloc(cap, sizeof(*grown));

        if (grown == NULL)
            return;
        for (size_t i = 0; i < answers->cap; i++)
            if (old[i].endpoint)
                grown[slot_of(grown, cap, old[i].endpoint, old[i].usage, old[i].transports)] =
                    old[i];
        free(old);
        answers->slot = grown;
        answers->cap = cap;
    }
    a = &answers->slot[slot_of(answers->slot, answers->cap, endpoint, usage, transports)];
    if (a->endpoint == NULL)
        answers->used++;
    *a = (nbrma_ucx_lane_answer_t) {
             .endpoint = endpoint,.usage = usage,.transports = transports,
             .lanes = lanes,.on = on};
}

void nbrma_ucx_lane_answers_free(nbrma_ucx_lane_answers_t * answers)
{
    free(answers->slot);
    answers->slot = NULL;
    answers->cap = answers->used = 0;
}
