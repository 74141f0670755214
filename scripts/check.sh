#!/bin/sh
# The README's second command (and what CI runs): the same set-up as
# build-and-demo.sh where it is not done yet, then the whole test suite with
# `make check`: unit tests, MPI integration tests, and MPICH's test/mpi/rma
# suite compared with vanilla MPICH 4.0.2. Ends with one line of counts.
#
#   scripts/check.sh                    the runs of test/mpi/rma that pass on vanilla
#   scripts/check.sh --full-rma-suite   every run of test/mpi/rma (75 minutes)
. "$(dirname "$0")/lib-setup.sh"
rma_target=check-rma-suite
[ "${1:-}" = "--full-rma-suite" ] && rma_target=check-rma-suite-full
nbrma_setup
cd "$nbrma_build"
rm -f check-summary.txt
status=0
nbrma_say "make check"
# -k: a failing unit test program does not keep the MPI tests and the
# suites (check-local) from running; the exit status still fails
make -k check RMA_SUITE_TARGET=$rma_target || status=1

nbrma_say "summary"
passed=0
failed=0
# gtest prints "[  PASSED  ] N tests." and "[  FAILED  ] N tests, listed below:"
unit_pass=$(cat test/unit/*.log 2>/dev/null | sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' | awk '{s+=$1} END{print s+0}')
unit_fail=$(cat test/unit/*.log 2>/dev/null | sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below.*/\1/p' | awk '{s+=$1} END{print s+0}')
unit_crash=$(grep -l '^FAIL\|^ERROR' test/unit/*.trs 2>/dev/null | grep -c . || true)
[ "$unit_fail" -gt 0 ] || unit_fail=$unit_crash
echo "unit tests (gtest cases): $unit_pass passed, $unit_fail failed" >> check-summary.txt
cat check-summary.txt
while read -r line; do
    p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
    f=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
done < check-summary.txt
[ "$failed" = 0 ] || status=1
echo
echo "check: $passed passed, $failed failed"
exit $status
