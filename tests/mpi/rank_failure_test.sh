#!/usr/bin/env bash
# A rank that dies or stalls must end the whole two-rank job within 30 s, with a message naming
# a rank, and leave no process behind. Usage: rank_failure_test.sh MPI_TESTS_BINARY kill|stall
set -uo pipefail
binary=${1:?usage: rank_failure_test.sh MPI_TESTS_BINARY kill|stall}
fault=${2:?kill or stall}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CNNSTUDIO_MPI_FAULT=$fault
start=$(date +%s)
timeout 60 mpirun -np 2 --oversubscribe --bind-to none --mca btl self,tcp -x CNNSTUDIO_MPI_FAULT \
  "$binary" --gtest_filter='RankFailure.*' > "$log" 2>&1
status=$?
elapsed=$(( $(date +%s) - start ))
tail -15 "$log"
echo "mpirun exit status $status after ${elapsed}s"
fail() { echo "FAILED: $*"; exit 1; }
[ "$status" -ne 124 ] || fail "the job hung (killed by timeout after 60 s)"
[ "$status" -ne 0 ] || fail "the job ended with status 0 although a rank $fault-ed"
[ "$elapsed" -le 30 ] || fail "the job took ${elapsed}s to end (limit 30 s)"
grep -qiE "rank [0-9]" "$log" || fail "no message names the rank"
pgrep -f "$binary --gtest_filter=RankFailure" > /dev/null && fail "worker processes were left behind"
echo "PASSED: a rank that ${fault}ed ended the job in ${elapsed}s"
