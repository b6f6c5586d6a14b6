#!/usr/bin/env bash
# Runs the libFuzzer targets of a fuzz build (-DCNNSTUDIO_FUZZ=ON) over their committed corpora.
#
#   tests/fuzz/run.sh BUILD_DIR --seconds S [--log-dir DIR] [TARGET...]   each target S seconds (CI)
#   tests/fuzz/run.sh BUILD_DIR --runs N    [--log-dir DIR] [TARGET...]   each target N executions
#   tests/fuzz/run.sh BUILD_DIR --runs N --seconds S ...                   whichever ends first
#
# TARGETs are names without _fuzz (fer2013_csv, idx, ...); none: every target built. Inputs the
# fuzzer finds go to a scratch folder, never into tests/fuzz/corpus (README.md there says how to
# merge the interesting ones). One process per target, one after another, on one core. Exits
# non-zero on the first target that finds a crash, leak, sanitizer report, timeout or OOM; its
# reproducer is kept in the scratch folder and named in the output.
set -euo pipefail

usage() { echo "usage: $0 BUILD_DIR [--runs N] [--seconds S] [--log-dir DIR] [TARGET...]" >&2; exit 2; }
[ $# -ge 3 ] || usage
build=$(cd "$1" && pwd); shift
limit=()
while [ "${1:-}" = "--runs" ] || [ "${1:-}" = "--seconds" ]; do
  case "$1" in
    --seconds) limit+=(-max_total_time="$2") ;;
    --runs) limit+=(-runs="$2") ;;
  esac
  shift 2
done
[ ${#limit[@]} -gt 0 ] || usage
log_dir=""
if [ "${1:-}" = "--log-dir" ]; then log_dir=$2; mkdir -p "$log_dir"; shift 2; fi
here=$(cd "$(dirname "$0")" && pwd)

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for binary in "$build"/tests/fuzz/*_fuzz; do targets+=("$(basename "$binary" _fuzz)"); done
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/cnnstudio-fuzz-run.XXXXXX")
echo "fuzz: new inputs and any reproducer go to $scratch"
# halt_on_error / -fno-sanitize-recover: the first report ends the run as a crash.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# What a committed log keeps of libFuzzer's output: the seed, the final status line and the
# final statistics (the full output stays in the scratch folder).
summarise() { grep -E '^INFO: Seed:|^#[0-9]+[[:space:]]+DONE|^stat::|^fuzz: ' "$1"; }

for target in "${targets[@]}"; do
  binary="$build/tests/fuzz/${target}_fuzz"
  [ -x "$binary" ] || { echo "fuzz: no target $binary (build it first)" >&2; exit 2; }
  mkdir -p "$scratch/$target"
  full="$scratch/$target.log"
  command=("$binary" "${limit[@]}" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$scratch/$target/crash-" "$scratch/$target" "$here/corpus/$target")
  echo "fuzz: ${command[*]}" | tee "$full"
  start=$(date +%s)
  status=0
  "${command[@]}" >> "$full" 2>&1 || status=$?
  if [ $status -ne 0 ]; then
    echo "fuzz: $target FAILED (exit $status) after $(( $(date +%s) - start )) s; reproducer in $scratch/$target/" >> "$full"
  else
    echo "fuzz: $target: $(grep -E '^stat::number_of_executed_units' "$full" | awk '{print $2}') executions, no crash, $(( $(date +%s) - start )) s" >> "$full"
  fi
  if [ -n "$log_dir" ]; then
    { summarise "$full"; [ $status -eq 0 ] || tail -n 80 "$full"; } > "$log_dir/$target.log"
  fi
  if [ $status -ne 0 ]; then
    tail -n 60 "$full"
    echo "fuzz: $target FAILED; full log $full" >&2
    exit 1
  fi
  tail -n 1 "$full"
done
