#!/bin/sh
# Fuzzes every decoder of bytes that arrive from another process or from the
# user (test/unit/test_fuzz.cpp): protocol messages and mailbox rings, whole
# lock epochs, pulled access epochs, rkey-cache messages, memory handles and
# the engine's inbound events, under AddressSanitizer and
# UndefinedBehaviorSanitizer, which stop at the first error. Needs no MPICH,
# UCX or configure: the decoders and the engine core are compiled here from
# the sources.
#
#   scripts/run-fuzz.sh [build-dir]      (default /tmp/nbrma-fuzz)
#
#   NBRMA_FUZZ_INPUTS         inputs per decoder (default 10000000)
#   NBRMA_FUZZ_ENGINE_INPUTS  engine sessions (default NBRMA_FUZZ_INPUTS;
#                             a session is one engine and up to 64 calls)
#   NBRMA_FUZZ_SEED           base seed; a failure prints the command that
#                             replays it (NBRMA_FUZZ_ONLY)
#   NBRMA_FUZZ_FILTER         gtest filter (default Fuzz.*)
#   CXX, CC                   compilers (default g++, gcc)
#
# On this 2-core machine (2026-11-24, beside a sanitized MPICH build), 10^7
# inputs per decoder took 6 to 76 s each and 10^7 engine sessions (7*10^7
# engine calls) 354 s: about 10 minutes in all.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=${1:-/tmp/nbrma-fuzz}
CXX=${CXX:-g++}
CC=${CC:-gcc}
inputs=${NBRMA_FUZZ_INPUTS:-10000000}
filter=${NBRMA_FUZZ_FILTER:-Fuzz.*}

formats=$top/ch4_netmod_rma/formats
core=$top/ch4_netmod_rma/core
includes="-I$formats -I$core/include -I$top/test/unit"
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
c_sources="$formats/whole_epoch_codec.c $formats/pulled_epoch_codec.c $formats/wire.c
$formats/memhandle_codec.c $formats/rkey_wire.c $formats/mailbox_ring.c"

mkdir -p "$out/obj"
echo "== building $out/nbrma_fuzz_tests"
objects=
for src in $c_sources; do
    obj=$out/obj/$(basename "$src" .c).o
    $CC -std=gnu11 -O1 -g $sanitize $includes -c "$src" -o "$obj"
    objects="$objects $obj"
done
for src in "$core"/src/*.cpp "$top/test/unit/test_fuzz.cpp"; do
    obj=$out/obj/$(basename "$src" .cpp).o
    $CXX -std=c++17 -O1 -g $sanitize $includes -c "$src" -o "$obj"
    objects="$objects $obj"
done
# shellcheck disable=SC2086
$CXX $sanitize -o "$out/nbrma_fuzz_tests" $objects -lgtest -lgtest_main -lpthread

echo "== running with NBRMA_FUZZ_INPUTS=$inputs${NBRMA_FUZZ_ENGINE_INPUTS:+ NBRMA_FUZZ_ENGINE_INPUTS=$NBRMA_FUZZ_ENGINE_INPUTS}"
NBRMA_FUZZ_INPUTS=$inputs ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$out/nbrma_fuzz_tests" --gtest_filter="$filter"
