#!/usr/bin/env bash
# Installs every Debian 12 package CNN Studio needs to build, test and run.
# Idempotent and non-interactive; run as root. The CUDA 13 toolkit (with cuDNN 9 and NCCL)
# is not a Debian package: when /usr/local/cuda exists the GPU backends are built, else skipped.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build git pkg-config ca-certificates
  # engine and CLI
  libdnnl-dev ocl-icd-opencl-dev opencl-headers
  nlohmann-json3-dev libcli11-dev zlib1g-dev
  # distributed training
  libopenmpi-dev openmpi-bin iproute2
  # datasets and the live demo (opencv-data: the Haar face cascade; opencv-doc: the photograph
  # of a face the live tests make their videos from)
  libopencv-dev dataset-fashion-mnist opencv-data opencv-doc
  # desktop app
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libqcustomplot-dev libgl-dev
  # tests and screenshots
  libgtest-dev googletest xvfb xauth
  # ONNX export (the interchange library) and its check by OpenCV DNN
  libonnx-dev libprotobuf-dev protobuf-compiler
  # the package test (cpack -G DEB reads dependencies with file and dpkg-shlibdeps)
  file dpkg-dev
  # the fuzz build (libFuzzer, ASan and UBSan runtimes; OpenMP for clang): tools/sanitize-and-fuzz.sh
  clang-14 libclang-rt-14-dev libomp-14-dev
  # our weights read by PyTorch (Debian's CPU build of torch; safetensors comes from PyPI)
  python3-torch python3-numpy python3-pip
)

export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: run as root (apt-get needs it)" >&2
  exit 1
fi
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"
