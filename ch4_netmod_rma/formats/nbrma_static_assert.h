/*
 * mpich-nbrma: compile-time checks of wire formats, the same in the C glue
 * (C11 _Static_assert) and in the C++ unit tests that include the MPICH-free
 * codec headers (static_assert).
 */

#ifndef NBRMA_STATIC_ASSERT_H_INCLUDED
#define NBRMA_STATIC_ASSERT_H_INCLUDED

#ifdef __cplusplus
#define NBRMA_STATIC_ASSERT static_assert
#else
#define NBRMA_STATIC_ASSERT _Static_assert
#endif

#endif /* NBRMA_STATIC_ASSERT_H_INCLUDED */
