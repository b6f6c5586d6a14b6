#!/usr/bin/env bash
# The Debian packages install anywhere: builds them with cpack, unpacks them into a fresh root
# (dpkg-deb -x, as dpkg would install them, without touching this machine's /usr) and runs the
# unpacked programs, which find their libraries through their own $ORIGIN RUNPATHs:
#   - cnnstudio --version (offscreen) and a one-epoch cnnstudio-train on Fashion-MNIST;
#   - without cnnstudio-gpu, `cnnstudio-train backends` lists cuda and cudnn as not installed;
#   - with it but without the CUDA libraries on the loader's path (ld.so --inhibit-cache hides
#     /etc/ld.so.cache, where the CUDA installer registers them), it names the missing library.
# Usage: install_test.sh CPACK BUILD_DIR VERSION
set -euo pipefail
cpack=$1
build_dir=$2
version=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== cpack -G DEB"
"$cpack" -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/packages" > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack could not build the packages"; }
studio_deb=$(ls "$work"/packages/cnnstudio_"$version"_*.deb)
gpu_deb=$(ls "$work"/packages/cnnstudio-gpu_"$version"_*.deb 2>/dev/null || true)

depends=$(dpkg-deb -f "$studio_deb" Depends)
echo "cnnstudio Depends: $depends"
if grep -qiE 'cuda|cudnn|cublas|nccl' <<< "$depends"; then
  fail "the cnnstudio package depends on CUDA: $depends"
fi

root=$work/root
dpkg-deb -x "$studio_deb" "$root"
bin=$root/usr/bin

echo "== the unpacked programs load our libraries from the unpacked root only"
for program in "$bin"/cnnstudio*; do
  outside=$(ldd "$program" | grep -E 'libcnn[a-z]*\.so' | grep -v " => $root/" || true)
  [ -z "$outside" ] || fail "$program loads libraries from outside the package: $outside"
done

if [ -x "$bin/cnnstudio" ]; then
  echo "== cnnstudio --version"
  QT_QPA_PLATFORM=offscreen "$bin/cnnstudio" --version | tee "$work/version.txt"
  grep -q "^cnnstudio $version" "$work/version.txt" || fail "cnnstudio --version does not say $version"
fi

echo "== cnnstudio-train backends, without cnnstudio-gpu"
"$bin/cnnstudio-train" backends | tee "$work/backends.txt"
grep -q '^cpu  *available' "$work/backends.txt" || fail "the cpu backend is not available"
grep -qE '^cuda  *unavailable: (the GPU backends are not installed|this build of CNN Studio has no CUDA support)' \
  "$work/backends.txt" || fail "cuda is not listed as unavailable with its reason"

echo "== one epoch of lenet5 on Fashion-MNIST"
"$bin/cnnstudio-train" --preset lenet5 --epochs 1 --limit 2000 --threads 2 \
  --run-dir "$work/run" | tee "$work/train.txt"
grep -q 'TEST ACCURACY' "$work/train.txt" || fail "cnnstudio-train printed no test accuracy"
[ -f "$work/run/model/model.safetensors" ] || fail "the run left no model"

if [ -n "$gpu_deb" ]; then
  echo "== with cnnstudio-gpu: the plugin loads, or says why it cannot"
  dpkg-deb -x "$gpu_deb" "$root"
  "$bin/cnnstudio-train" backends | tee "$work/backends.txt"
  if grep -qE '^cuda  *unavailable: the GPU backends (are not installed|cannot be loaded)' "$work/backends.txt"; then
    fail "the installed plugin was not loaded"
  fi
  echo "== with cnnstudio-gpu, without the CUDA libraries on the loader's path"
  loader=(env -u LD_LIBRARY_PATH /lib64/ld-linux-x86-64.so.2 --inhibit-cache)
  plugin=$(find "$root" -name libcnngpu.so)
  # ld.so --list fails (127) on the first library it cannot find.
  listing=$("${loader[@]}" --list "$plugin" 2>&1 || true)
  if grep -qE 'not found|cannot open shared object file' <<< "$listing"; then
    "${loader[@]}" "$bin/cnnstudio-train" backends | tee "$work/backends.txt"
    grep -qE '^cuda  *unavailable: the GPU backends need the CUDA [0-9]+ runtime, cuDNN [0-9]+ and NCCL: lib[a-z]+\.so' \
      "$work/backends.txt" || fail "the missing CUDA library is not named"
  else
    echo "the CUDA libraries are in the loader's default folders here: they cannot be hidden, check left out"
  fi
fi
echo "PASS"
