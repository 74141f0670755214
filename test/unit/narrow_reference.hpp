// The plain arithmetic the narrow atomics must agree with, element by
// element: the model of test_narrow_ops.cpp and test_segments.cpp.
#ifndef NBRMA_TEST_NARROW_REFERENCE_HPP
#define NBRMA_TEST_NARROW_REFERENCE_HPP

#include "narrow_ops.h"

template <class T> T reference(T old, T operand, nbrma_narrow_op_t op)
{
    switch (op) {
    case NBRMA_NARROW_SUM: return static_cast<T>(old + operand);
    case NBRMA_NARROW_BAND: return static_cast<T>(old & operand);
    case NBRMA_NARROW_BOR: return static_cast<T>(old | operand);
    case NBRMA_NARROW_BXOR: return static_cast<T>(old ^ operand);
    case NBRMA_NARROW_REPLACE: return operand;
    default: return old;
    }
}

#endif
