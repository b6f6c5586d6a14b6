#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: the GPU suites on the final build (the filter kernel with one
# pixel a lane and five stages, verify.sh's variantB), whose plugin travels compressed
# (.device/lib/cnnstudio/plugins/libcnngpu.so.xz) so that a part of FER2013 fits beside it.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-pass/tests.sh
set -uo pipefail
OUT=$OUT bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE 'PASSED|FAILED|SKIPPED \]|tests ran' $OUT/kernels_tests.log $OUT/engine_tests.log | sort | uniq -c
