#!/usr/bin/env bash
# Runs the libFuzzer targets of a fuzz build (-DCNNSTUDIO_FUZZ=ON) over their committed corpora.
#
#   tests/fuzz/run.sh BUILD_DIR --seconds S [--log-dir DIR] [TARGET...]   each target S seconds (CI)
#   tests/fuzz/run.sh BUILD_DIR --runs N    [--log-dir DIR] [TARGET...]   each target N executions
#   tests/fuzz/run.sh BUILD_DIR --runs N --seconds S ...                   whichever ends first
#   ... --jobs J               J libFuzzer processes per target, sharing its corpus folder; --runs
#                              is split between them (N/J each, rounded up), --seconds is each one's
#   ... --parallel-targets P   P targets at once (J processes each: P x J cores)
#
# TARGETs are names without _fuzz (fer2013_csv, idx, ...); none: every target built. Inputs the
# fuzzer finds go to a scratch folder, never into tests/fuzz/corpus (README.md there says how to
# merge the interesting ones). Without --jobs and --parallel-targets: one process per target, one
# target after another, on one core. A target's executions are the sum of its processes'
# stat::number_of_executed_units, each process's seed and statistics kept in the log. Exits
# non-zero when a target finds a crash, leak, sanitizer report, timeout or OOM (the target's
# other processes are stopped; one target after another, the targets after it are not run;
# with --parallel-targets, those already running finish); the reproducer is kept in the scratch
# folder and named in the output.
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR [--runs N] [--seconds S] [--jobs J] [--parallel-targets P] [--log-dir DIR] [TARGET...]" >&2
  exit 2
}
[ $# -ge 3 ] || usage
build=$(cd "$1" && pwd); shift
runs="" seconds="" jobs=1 parallel_targets=1 log_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2 ;;
    --seconds) seconds=$2 ;;
    --jobs) jobs=$2 ;;
    --parallel-targets) parallel_targets=$2 ;;
    --log-dir) log_dir=$2 ;;
    --*) usage ;;
    *) break ;;
  esac
  [ $# -ge 2 ] || usage
  shift 2
done
[ -n "$runs$seconds" ] || usage
for number in $runs $seconds $jobs $parallel_targets; do
  [[ $number =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: '$number' is not a positive whole number" >&2; usage; }
done
limit=()
[ -z "$seconds" ] || limit+=(-max_total_time="$seconds")
[ -z "$runs" ] || limit+=(-runs=$(( (runs + jobs - 1) / jobs )))
[ -z "$log_dir" ] || mkdir -p "$log_dir"
here=$(cd "$(dirname "$0")" && pwd)

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for binary in "$build"/tests/fuzz/*_fuzz; do targets+=("$(basename "$binary" _fuzz)"); done
fi
for target in "${targets[@]}"; do
  [ -x "$build/tests/fuzz/${target}_fuzz" ] || { echo "fuzz: no target $build/tests/fuzz/${target}_fuzz (build it first)" >&2; exit 2; }
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/cnnstudio-fuzz-run.XXXXXX")
echo "fuzz: new inputs and any reproducer go to $scratch"
# halt_on_error / -fno-sanitize-recover: the first report ends the run as a crash.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# OpenCV allocates an image's pixels as soon as the header is read: a 69-byte BMP claiming
# 30000 x 28000 pixels asks for 2.6 GB, past libFuzzer's -rss_limit_mb=2048 below, an
# out-of-memory report that says nothing about our code. OpenCV refuses images of more pixels
# than this variable (read when libopencv_imgcodecs loads, hence here, before the targets start;
# its default is 2^30) by throwing a cv::Exception, which our image reader turns into an Error
# naming the file. 2^24 pixels (4096 x 4096) keeps a decoded colour image under 50 MB.
export OPENCV_IO_MAX_IMAGE_PIXELS=${OPENCV_IO_MAX_IMAGE_PIXELS:-16777216}
# The image loader decodes 16 files or more on OpenCV's thread pool (TBB): with a fuzz process on
# every core, a pool in each would only compete with the others for the cores (its threads spin
# while they wait for work), so OpenCV runs its loops on the calling thread.
export OPENCV_FOR_THREADS_NUM=${OPENCV_FOR_THREADS_NUM:-1}

# libFuzzer's options for one target. Without -max_len, inputs grow up to the largest corpus
# file (4096 bytes at least). events: the two real runs' logs (12 and 15 KB, mostly alike step
# lines) let inputs grow to 15 KB and made the target 5x slower; each kind of line is also in a
# seed under 4 KB (start-step-checkpoint.jsonl, epoch-finished.jsonl), so 4096 keeps the coverage.
target_options() {
  case "$1" in
    events) echo -max_len=4096 ;;
  esac
}

# What a committed log keeps of libFuzzer's output: the seed, the final status line and the
# final statistics (the full output stays in the scratch folder).
summarise() { grep -E '^INFO: Seed:|^#[0-9]+[[:space:]]+DONE|^stat::|^fuzz: ' "$1"; }

# Runs one target's processes; writes $scratch/TARGET.log (each process's command, seed and
# statistics, then the total) and its copy in the log folder. Returns non-zero on a finding.
run_target() {
  local target=$1 binary="$build/tests/fuzz/$1_fuzz" full="$scratch/$1.log"
  local crashes="$scratch/$1.crashes" start worker other finished status failed=0 failed_log=""
  local pids=() logs=() executions=0
  mkdir -p "$scratch/$target" "$crashes"
  : > "$full"
  start=$(date +%s)
  for (( worker = 1; worker <= jobs; worker++ )); do
    local command=("$binary" "${limit[@]}" $(target_options "$target") -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
                   -artifact_prefix="$crashes/" "$scratch/$target" "$here/corpus/$target")
    logs+=("$scratch/$target.worker-$worker.log")
    echo "fuzz: $target worker $worker/$jobs: ${command[*]}" | tee -a "$full" "${logs[-1]}"
    "${command[@]}" >> "${logs[-1]}" 2>&1 &
    pids+=($!)
  done
  # The first process to stop with a finding stops the others (libFuzzer prints its statistics
  # when stopped, and exits 0).
  local running=("${pids[@]}")
  while [ ${#running[@]} -gt 0 ]; do
    status=0
    wait -n -p finished "${running[@]}" || status=$?
    for (( other = 0; other < ${#running[@]}; other++ )); do
      [ "${running[other]}" != "$finished" ] || { unset 'running[other]'; running=("${running[@]}"); break; }
    done
    [ $status -ne 0 ] && [ $failed -eq 0 ] || continue
    failed=$status
    for (( other = 0; other < jobs; other++ )); do
      [ "${pids[other]}" != "$finished" ] || failed_log=${logs[other]}
    done
    [ ${#running[@]} -eq 0 ] || kill "${running[@]}" 2>/dev/null || true
  done
  for (( worker = 1; worker <= jobs; worker++ )); do
    { echo "fuzz: $target worker $worker/$jobs:"; summarise "${logs[worker - 1]}" | grep -v '^fuzz: ' || true; } >> "$full"
    executions=$(( executions + $(awk '/^stat::number_of_executed_units/ { n = $2 } END { print n + 0 }' "${logs[worker - 1]}") ))
  done
  local seconds_taken=$(( $(date +%s) - start ))
  if [ $failed -eq 0 ]; then
    echo "fuzz: $target: $executions executions by $jobs process(es), no crash, $seconds_taken s" >> "$full"
    [ -z "$log_dir" ] || cp "$full" "$log_dir/$target.log"
    tail -n 1 "$full"
    return 0
  fi
  echo "fuzz: $target FAILED (exit $failed) after $seconds_taken s and $executions executions; reproducer in $crashes/" >> "$full"
  [ -z "$log_dir" ] || { cat "$full"; tail -n 80 "$failed_log"; } > "$log_dir/$target.log"
  tail -n 60 "$failed_log"
  echo "fuzz: $target FAILED; full log $failed_log" >&2
  return 1
}

if [ "$parallel_targets" -eq 1 ]; then
  for target in "${targets[@]}"; do run_target "$target" || exit 1; done
  exit 0
fi
# Several targets at once: each in its own subshell, a new one started as one ends.
failures=0 running=0
for target in "${targets[@]}"; do
  if [ $running -ge "$parallel_targets" ]; then
    wait -n || failures=$(( failures + 1 ))
    running=$(( running - 1 ))
  fi
  run_target "$target" &
  running=$(( running + 1 ))
done
while [ $running -gt 0 ]; do
  wait -n || failures=$(( failures + 1 ))
  running=$(( running - 1 ))
done
[ $failures -eq 0 ] || { echo "fuzz: $failures target(s) FAILED" >&2; exit 1; }
