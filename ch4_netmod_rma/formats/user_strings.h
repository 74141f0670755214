/*
 * mpich-nbrma: the strings the user passes, parsed and checked MPICH-free so
 * that unit tests reach every accepted and refused input without MPI
 * (test/unit/test_user_strings.cpp): the list of operation names of
 * MPIX_Win_op_intrinsic (hooks/rma_extension_hooks.c maps the names to MPI
 * operations and reports a refused list with MPICH's error codes) and the
 * values of the component's info keys (common/nbrma_settings.c).
 */

#ifndef NBRMA_USER_STRINGS_H_INCLUDED
#define NBRMA_USER_STRINGS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The names of MPIX_Win_op_intrinsic's list (the paper's): the predefined
 * MPI_Op without "MPI_", and "cas" for compare-and-swap. */
typedef enum {
    NBRMA_INTRINSIC_SUM,
    NBRMA_INTRINSIC_PROD,
    NBRMA_INTRINSIC_MAX,
    NBRMA_INTRINSIC_MIN,
    NBRMA_INTRINSIC_LAND,
    NBRMA_INTRINSIC_LOR,
    NBRMA_INTRINSIC_LXOR,
    NBRMA_INTRINSIC_BAND,
    NBRMA_INTRINSIC_BOR,
    NBRMA_INTRINSIC_BXOR,
    NBRMA_INTRINSIC_MAXLOC,
    NBRMA_INTRINSIC_MINLOC,
    NBRMA_INTRINSIC_REPLACE,
    NBRMA_INTRINSIC_NO_OP,
    NBRMA_INTRINSIC_CAS,
    NBRMA_INTRINSIC_N_NAMES
} nbrma_intrinsic_name_t;

/* A name of the list has fewer characters than this; it is also the size
 * of the buffer that receives an unknown name (with its '\0'). */
#define NBRMA_INTRINSIC_NAME_SIZE 16

typedef enum {
    NBRMA_INTRINSIC_LIST_OK,
    /* an empty name (the list empty, or a comma at its start, at its end or
     * after another), a name of NBRMA_INTRINSIC_NAME_SIZE characters or more,
     * or two names without a comma between them: the whole list is what to
     * report */
    NBRMA_INTRINSIC_LIST_MALFORMED,
    /* a name that is none of the above: the name is what to report */
    NBRMA_INTRINSIC_LIST_UNKNOWN_NAME,
    /* more names than the caller has room for */
    NBRMA_INTRINSIC_LIST_TOO_MANY
} nbrma_intrinsic_list_status_t;

/* "sum, replace,cas" -> names[0..*n): names compared without regard to case,
 * blanks and tabs allowed around each, a comma between two. names[] has
 * room for `capacity` names. Stops at the first fault from the left (a name
 * is checked for its form, then whether it is known, then for room); the
 * names before the fault are in names[0..*n), and for
 * NBRMA_INTRINSIC_LIST_UNKNOWN_NAME bad_name holds the name, '\0'-terminated
 * (bad_name is left alone otherwise). */
nbrma_intrinsic_list_status_t nbrma_intrinsic_list_parse(const char *list,
                                                         nbrma_intrinsic_name_t * names,
                                                         size_t capacity, size_t * n,
                                                         char bad_name[NBRMA_INTRINSIC_NAME_SIZE]);

/* An info value as a boolean: "true" or "1" is true, "false" or "0" false
 * (exactly: no other case, no blanks). Returns whether `s` is one of them,
 * and only then sets *value. */
bool nbrma_parse_bool(const char *s, bool *value);

/* An info value as a size: decimal digits only (no sign, no blank before or
 * after) and at most SIZE_MAX. Returns whether `s` is one, and only then
 * sets *value. May change errno (the overflow check is strtoull's). */
bool nbrma_parse_size(const char *s, size_t * value);

/* The reorder flags of the nonblocking-epochs paper (section VI-B;
 * NBRMA_REORDER_* of nbrma_core.h) by the names the paper gives their info
 * keys, each key one flag. */
#define NBRMA_N_REORDER_KEYS 4
typedef struct {
    const char *key;
    unsigned flag;
} nbrma_reorder_key_t;
extern const nbrma_reorder_key_t nbrma_reorder_keys[NBRMA_N_REORDER_KEYS];

/* Whether info holds `key`, and then as *on the boolean it is set to (the
 * glue reads MPICH's info object). */
typedef bool (*nbrma_info_bool_fn) (void *info, const char *key, bool *on);

/* `flags` with the reorder keys that `info` holds applied: a key set to true
 * sets its flag, to false clears it; a key info does not hold (or holds
 * with another value) leaves its flag as it was. */
unsigned nbrma_reorder_flags_from_info(unsigned flags, nbrma_info_bool_fn get_bool, void *info);

#ifdef __cplusplus
}
#endif

#endif /* NBRMA_USER_STRINGS_H_INCLUDED */
