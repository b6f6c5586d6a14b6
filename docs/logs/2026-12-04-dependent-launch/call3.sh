#!/usr/bin/env bash
# Call 3 (see driver.sh): the GPU suites and the interleaved step of the three builds, then issue
# #17's side-by-side with PyTorch on this build (tools/device-session.sh side-by-side).
# Usage: OUT=DIR bash docs/logs/2026-12-04-dependent-launch/call3.sh
set -uo pipefail
bash docs/logs/2026-12-04-dependent-launch/driver.sh
OUT=$OUT timeout 300 bash tools/device-session.sh side-by-side > $OUT/side_by_side.out 2>&1
echo "side-by-side rc=$?"
grep '^{' $OUT/side_by_side_pytorch.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(d.get("round", ""), d.get("backend", d.get("framework", "")), d.get("mode", ""), d.get("compile", ""), d.get("images_per_s"))'
