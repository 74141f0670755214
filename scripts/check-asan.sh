#!/bin/sh
# `make check-asan`: the whole test suite with AddressSanitizer and
# UndefinedBehaviorSanitizer. A second build directory (_build-asan),
# configured with --enable-sanitizers, holds MPICH and the component compiled
# with -fsanitize=address,undefined (MPICH's CFLAGS, which its mpicc passes
# on, so the MPI tests are instrumented too), and the unit tests, simulator,
# fuzzer and the decoders they test built with the same flags. Then
# `make check` there, with the slice of MPICH's RMA suite that takes under a
# second per run on vanilla (check-rma-suite-quick), and a scan of every log
# for sanitizer reports: an ASan error stops its process
# (the test fails); UBSan reports do not stop it, so they are counted here and
# any report fails the run.
#
#   scripts/check-asan.sh            build (about 20 minutes the first time) and check
#
# Environment: NBRMA_ASAN_BUILD_DIR (default _build-asan in the repository).
. "$(dirname "$0")/lib-setup.sh"
set -eu
nbrma_install_deps
nbrma_build=${NBRMA_ASAN_BUILD_DIR:-$nbrma_repo/_build-asan}
NBRMA_CONFIGURE_ARGS="--prefix=$nbrma_build/install --enable-sanitizers ${NBRMA_CONFIGURE_ARGS:-}"
nbrma_configure
nbrma_build_and_install
build=$nbrma_build

# LeakSanitizer stays off: MPICH 4.0.2 and hydra keep memory until exit by
# design, which it would report at every MPI_Finalize. UCX's memory hooks
# and ASan's interceptors coexist (UCX_MEM_* defaults).
# allocator_may_return_null: a test asks MPI_Alloc_mem for 2^60 bytes and
# expects MPI_ERR_NO_MEM, which ASan's malloc would otherwise abort on.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:allocator_may_return_null=1:log_path=$build/sanitizer
# resident-memory and mapping bounds are the normal check's (nbrma_test.h)
export NBRMA_TEST_SANITIZED=1
export UBSAN_OPTIONS=print_stacktrace=1:log_path=$build/sanitizer
rm -f "$build"/sanitizer.*
nbrma_say "make check with sanitizers"
status=0
make check RMA_SUITE_TARGET=check-rma-suite-quick TWO_HOSTS_TARGET= || status=1

reports=$(cat "$build"/sanitizer.* 2>/dev/null | grep -c 'runtime error\|ERROR: AddressSanitizer' || true)
nbrma_say "sanitizer reports: $reports"
if [ "$reports" -gt 0 ]; then
    # one line per distinct report, with its first frame in our code or MPICH's
    cat "$build"/sanitizer.* | grep 'runtime error\|ERROR: AddressSanitizer' | sort | uniq -c | sort -rn | head -40
    status=1
fi
exit $status
