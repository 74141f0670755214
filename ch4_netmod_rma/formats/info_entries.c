/*
 * mpich-nbrma: the text of a reported info key's value (info_entries.h).
 */

#include "info_entries.h"

#include <stdio.h>

const char *nbrma_info_entry_value(const nbrma_info_entry * e, char buf[NBRMA_INFO_VALUE_BYTES])
{
    switch (e->type) {
        case NBRMA_INFO_BOOL:
            return e->number != 0 ? "true" : "false";
        case NBRMA_INFO_INT:
            snprintf(buf, NBRMA_INFO_VALUE_BYTES, "%lld", e->number);
            return buf;
        default:
            return e->string;
    }
}
