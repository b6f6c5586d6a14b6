#!/usr/bin/env bash
# The checks beyond the test suite, from the repository root, after packaging/install-deps.sh:
#   1. the suite built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc; CUDA and GUI off):
#      the first report ends its process, so a finding fails the test that ran into it;
#   2. the fuzz build (clang, libFuzzer) and a short run of every fuzz target over its corpus.
# .ci/run runs it after the test suite (CI's limit is 60 minutes for everything on 2 cores);
# docs/architecture.md ("Checks") says how to run each stage alone.
set -euo pipefail
cd "$(dirname "$0")/.."
# -O1 -g1: what ASan's own documentation suggests, and a third less compile time than -O2 -g.
# The GUI is left to stage 1 (its tests run there, offscreen): building Qt views a second time
# would take CI past its hour.
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" \
  -DCNNSTUDIO_SANITIZE=address,undefined -DCNNSTUDIO_CUDA=OFF -DCNNSTUDIO_GUI=OFF
cmake --build build-sanitize
# Leaks of third-party libraries only, each explained in the file. allocator_may_return_null:
# an impossible allocation returns null, as it does without ASan, so the tests of that error run.
asan=halt_on_error=1:detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0
# The package test is left to stage 1: it checks what cpack and dpkg make of the build, not
# how our code uses memory, and a sanitized build is not what ships. The jobs started through
# mpirun run apart, with full stack unwinding at every allocation (slow): OpenMPI's leaks are
# recognised by the MPI calls far up their stacks, which the fast unwinder does not reach.
multi_process='^(CnnstudioTrainDistributed\.|Chaos\.|mpi\.)'
ASAN_OPTIONS=$asan ctest --test-dir build-sanitize --output-on-failure -j2 -E "^package\.|$multi_process"
ASAN_OPTIONS=$asan:fast_unwind_on_malloc=0 ctest --test-dir build-sanitize --output-on-failure -R "$multi_process"
unset UBSAN_OPTIONS LSAN_OPTIONS

CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCNNSTUDIO_FUZZ=ON
cmake --build build-fuzz
tests/fuzz/run.sh build-fuzz --seconds "${CNNSTUDIO_FUZZ_SECONDS:-25}"
