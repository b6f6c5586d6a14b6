#!/usr/bin/env bash
# Writes the three teacher models of the resnet4-fer-distilled recipe (the shipped fer-resnet's
# teachers) into DIR, from this repository's history: each is a fer-resnet that shipped before
# it, as the commit that shipped it left resources/models/fer-resnet.
#   DIR/fer-resnet4-e200   resnet4-fer, 200 epochs, 70.94% PublicTest (commit ad46ba0)
#   DIR/fer-resnet-e120    resnet-fer, 120 epochs, 70.77% (commit 55e0f23)
#   DIR/fer-resnet-e80     resnet-fer, 80 epochs, 70.27% (commit 84e909f)
# Then: cnnstudio-train --recipe resnet4-fer-distilled --dataset fer2013:PATH \
#         --teacher DIR/fer-resnet4-e200 --teacher DIR/fer-resnet-e120 --teacher DIR/fer-resnet-e80
# Needs a git clone with its history (a shallow clone or a source archive has none).
set -euo pipefail
dir=${1:?usage: tools/fer-teachers.sh DIR}
cd "$(dirname "$0")/.."
for teacher in fer-resnet4-e200:ad46ba0 fer-resnet-e120:55e0f23 fer-resnet-e80:84e909f; do
  name=${teacher%%:*} commit=${teacher#*:}
  git cat-file -e "$commit^{commit}" 2>/dev/null || {
    echo "fer-teachers: commit $commit is not in this clone: clone the repository with its history" >&2; exit 1; }
  mkdir -p "$dir/$name"
  for file in model.json model.safetensors spec.json; do
    git show "$commit:resources/models/fer-resnet/$file" > "$dir/$name/$file.part"
    mv "$dir/$name/$file.part" "$dir/$name/$file"
  done
  echo "$dir/$name ($(git log -1 --format=%h "$commit"))"
done
