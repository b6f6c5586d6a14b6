#!/usr/bin/env bash
# Packs a GPU build (cmake -DCNNSTUDIO_GUI=OFF -DCNNSTUDIO_OPENCV=OFF) into .device/ for the lent
# GPU machine, which has CUDA, cuDNN, NCCL and OpenMPI but no oneDNN: the binaries, our shared
# libraries, libdnnl and Fashion-MNIST. (The PyTorch reference, bench/pytorch_reference.py,
# travels with the working tree.) Usage: tools/pack-device.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: tools/pack-device.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.device
plugins=$out/lib/cnnstudio/plugins  # beside libcnnbackends, where the registry loads the GPU plugin from
rm -rf "$out" && mkdir -p "$out/bin" "$plugins"
for program in app/cnnstudio-bench app/cnnstudio-train tests/engine_tests tests/kernels_tests tests/mpi_tests \
               bench/conv_bench bench/cpu_ops_bench bench/augment_bench bench/fusion_bench; do
  [ -x "$build/$program" ] && cp "$build/$program" "$out/bin/"
done
cp "$build"/core/libcnncore.so "$build"/engine/libcnnengine.so "$build"/datasets/libcnndatasets.so \
   "$build"/kernels/libcnncpu.so "$build"/kernels/libcnnbackends.so "$build"/interchange/libcnninterchange.so \
   "$out/lib/"
cp "$build"/kernels/cnnstudio/plugins/libcnngpu.so "$plugins/"
# Compressed (xz): the carried tree may hold 64 MiB in all (device-session.sh unpacks them). ONNX and
# protobuf for cnnstudio-train's export/import, which the GPU machine lacks.
for library in libdnnl.so.2 libOpenCL.so.1 libonnx.so.1 libonnx_proto.so.1 libprotobuf.so.32; do
  xz -c -9 "/usr/lib/x86_64-linux-gnu/$library" > "$out/lib/$library.xz"
done
strip --strip-unneeded "$out"/bin/* "$out"/lib/libcnn*.so "$plugins"/libcnngpu.so
# The plugin travels compressed (7.6 MB -> 2 MB, room for a data part beside it in one call);
# tools/device-session.sh unpacks it there with the libraries.
xz -9 "$plugins/libcnngpu.so"
cp -r /usr/share/datasets/fashion-mnist "$out/fashion-mnist"
# The live benchmark (device-session.sh live), when the build has it (OpenCV on): the program,
# libcnnlive, the OpenCV libraries and their own dependencies (the GPU machine has no OpenCV;
# the C and C++ runtimes, OpenMP and OpenMPI it has), the Haar cascade, a model and a video.
if [ -x "$build/app/cnnstudio-live" ]; then
  live=${LIVE_MODEL:?set LIVE_MODEL to a model folder (RUN_DIR/model) for the live benchmark}
  mkdir -p "$out/live/lib" "$out/live/haarcascades"
  cp "$build/app/cnnstudio-live" "$out/bin/" && cp "$build"/live/libcnnlive.so "$out/lib/"
  # OpenCV from OPENCV_LIB_DIR (tools/build-device-opencv.sh) when given: Debian's own libraries
  # and their codec and video dependencies outgrow what a call may carry.
  if [ -n "${OPENCV_LIB_DIR:-}" ]; then
    libraries=$(ls "$OPENCV_LIB_DIR"/libopencv_*.so.406; ldd "$OPENCV_LIB_DIR"/libopencv_*.so.406 |
                awk '/=> (\/usr)?\/lib\/x86_64-linux-gnu\/lib(png|jpeg)/ {print $3}' | sort -u)
  else
    libraries=$(ldd "$build/app/cnnstudio-live" | awk '/=> \/usr\/lib\/x86_64-linux-gnu\// {print $3}')
  fi
  echo "$libraries" |
    grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libgomp|libz|libmpi|libopen-|libdnnl|libOpenCL)[.-]' |
    while read -r library; do xz -c -9 "$library" > "$out/lib/$(basename "$library").xz"; done
  cp /usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml "$out/live/haarcascades/"
  cp -r "$live" "$out/live/model"
  "$build/bench/face_video" "$out/live/face-640x480.avi" 150
fi
du -sh "$out"
