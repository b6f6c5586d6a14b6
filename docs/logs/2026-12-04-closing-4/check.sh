#!/usr/bin/env bash
# Issue #17, 2026-12-04 (stop 43), one H200, the build of 1bcd131 (the held weight copies staged
# ahead; no opt-in for the filter partials' shared memory; the packed transposes came after it,
# in 587eab8): the GPU suites, then issue #17's side-by-side with PyTorch
# (tools/device-session.sh side-by-side).
# Usage: OUT=DIR bash docs/logs/2026-12-04-closing-4/check.sh
set -uo pipefail
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 240 bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE '^\[  (PASSED|FAILED|SKIPPED) \]|tests ran' $OUT/tests/*.log
OUT=$OUT timeout 330 bash tools/device-session.sh side-by-side > $OUT/side_by_side.out 2>&1
echo "side-by-side rc=$?"
grep '^{' $OUT/side_by_side_pytorch.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(d.get("round", ""), d.get("backend", d.get("framework", "")), d.get("mode", ""), d.get("compile", ""), d.get("images_per_s"))'
# PyTorch's bf16 steps ran slow in this call (compiled 95,406 images/s against 105,419 to
# 112,839 in every other command since 2026-11-30; eager bf16 channels-last 52,488); the
# side-by-side alone ran again in the next call, into rerun/:
#   mkdir -p $OUT/rerun && OUT=$OUT/rerun timeout 330 bash tools/device-session.sh side-by-side
