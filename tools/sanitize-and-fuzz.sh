#!/usr/bin/env bash
# The checks beyond the test suite, from the repository root, after packaging/install-deps.sh:
#   1. the whole suite built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc, CUDA off):
#      the first report ends its process, so a finding fails the test that ran into it;
#   2. the fuzz build (clang, libFuzzer) and a short run of every fuzz target over its corpus.
# Not yet part of .ci/run: no whole run of it has been timed on CI's 2 cores (the limit is 60
# minutes for everything); docs/architecture.md ("Checks") says how to run each stage alone.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCNNSTUDIO_SANITIZE=address,undefined -DCNNSTUDIO_CUDA=OFF
cmake --build build-sanitize
# Leaks of third-party libraries only, each explained in the file.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0
# The package test is left to stage 1: it checks what cpack and dpkg make of the build, not
# how our code uses memory, and a sanitized build is not what ships.
ctest --test-dir build-sanitize --output-on-failure -E '^package\.'
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS

CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCNNSTUDIO_FUZZ=ON
cmake --build build-fuzz
tests/fuzz/run.sh build-fuzz --seconds "${CNNSTUDIO_FUZZ_SECONDS:-25}"
