/*
 * mpich-nbrma: the keys that MPI_Win_get_info reports, as tables of entries
 * (ch4/common/nbrma_settings.h makes them with INFO_BOOL, INFO_INT and
 * INFO_STRING) and the text of each value. MPICH-free, unit-tested without
 * MPI (test/unit/test_info_entries.cpp); the glue sets them in an MPI_Info.
 */

#ifndef NBRMA_INFO_ENTRIES_H_INCLUDED
#define NBRMA_INFO_ENTRIES_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

/* A key's value: "true"/"false", a decimal integer or a string. */
typedef enum { NBRMA_INFO_BOOL, NBRMA_INFO_INT, NBRMA_INFO_STRING } nbrma_info_type;

typedef struct {
    const char *key;
    nbrma_info_type type;
    long long number;
    const char *string;
} nbrma_info_entry;

/* Room for any value's text but a string's (a long long's 20 digits and
 * sign). */
#define NBRMA_INFO_VALUE_BYTES 32

/* The text of `e`'s value: "true" or "false" (number nonzero or 0), the
 * decimal number written into `buf`, or the entry's string. */
const char *nbrma_info_entry_value(const nbrma_info_entry * e, char buf[NBRMA_INFO_VALUE_BYTES]);

#ifdef __cplusplus
}
#endif
#endif /* NBRMA_INFO_ENTRIES_H_INCLUDED */
