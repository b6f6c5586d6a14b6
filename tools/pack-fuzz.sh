#!/usr/bin/env bash
# Packs a fuzz build (tests/fuzz/README.md: -DCNNSTUDIO_FUZZ=ON with clang) into .device/fuzz for a
# long fuzz campaign on the lent GPU machine's many cores (tools/device-session.sh fuzz): the
# targets, our libraries they load, and the third-party libraries that machine lacks (compressed,
# device-session.sh unpacks them). OpenCV comes from OPENCV_LIB_DIR, a build of Debian's own
# OpenCV 4.6.0 source with only the modules the image targets load (tools/build-device-opencv.sh
# with OPENCV_MODULES=core,imgproc,imgcodecs): Debian's libraries and their closure outgrow what a
# call may carry. Usage: OPENCV_LIB_DIR=DIR tools/pack-fuzz.sh FUZZ_BUILD_DIR
set -euo pipefail
build=${1:?usage: OPENCV_LIB_DIR=DIR tools/pack-fuzz.sh FUZZ_BUILD_DIR}
opencv=${OPENCV_LIB_DIR:?set OPENCV_LIB_DIR to the lib folder of tools/build-device-opencv.sh}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.device/fuzz
rm -rf "$out" && mkdir -p "$out/build/tests/fuzz" "$out/lib"
cp "$build"/tests/fuzz/*_fuzz "$out/build/tests/fuzz/"
# Debug sections dropped (the carry limit); the symbol tables stay, so sanitizer reports name
# the functions.
strip --strip-debug "$out"/build/tests/fuzz/*_fuzz
# Every library the targets load but the C and C++ runtimes, with our OpenCV in place of Debian's.
libraries=$(LD_LIBRARY_PATH=$opencv ldd "$build"/tests/fuzz/*_fuzz | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
            grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libz|libpthread|libdl|librt|ld-linux[^/]*)[.-]')
for library in $libraries; do
  case $library in
    "$build"/*) cp "$library" "$out/lib/" && strip --strip-debug "$out/lib/$(basename "$library")" ;;
    *) xz -c -9 "$library" > "$out/lib/$(basename "$library").xz" ;;
  esac
done
du -sh "$out"
