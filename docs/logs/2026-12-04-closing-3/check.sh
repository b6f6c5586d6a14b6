#!/usr/bin/env bash
# Issue #17, 2026-12-04 (stop 43), one H200, main at 719318f (the tensor-core filter sums and the review
# mends): the GPU suites, then issue #17's side-by-side with PyTorch
# (tools/device-session.sh side-by-side).
# Usage: OUT=DIR bash docs/logs/2026-12-04-closing-3/check.sh
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
