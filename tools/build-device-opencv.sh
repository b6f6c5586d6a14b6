#!/usr/bin/env bash
# Builds the OpenCV the live benchmark carries to the GPU machine, which has none: Debian 12's own
# OpenCV 4.6.0 source (the version our binaries are built against, so its libraries stand in for
# Debian's at run time), with only the modules cnnstudio-live loads and no codec or video
# back-end beyond PNG, JPEG and OpenCV's built-in MJPEG AVI reader and writer. Debian's libraries
# pull in GDAL, FFmpeg and GStreamer: about 90 MB compressed, past the 64 MiB a device call
# carries. Usage: tools/build-device-opencv.sh DIR; then
# OPENCV_LIB_DIR=DIR/install/lib LIVE_MODEL=... tools/pack-device.sh BUILD_DIR.
# OPENCV_MODULES=core,imgproc,imgcodecs builds only what the image fuzz targets load (tools/pack-fuzz.sh).
set -euo pipefail
dir=${1:?usage: tools/build-device-opencv.sh DIR}
version=4.6.0+dfsg
mkdir -p "$dir" && cd "$dir"
[ -f "opencv_$version.orig.tar.xz" ] ||
  curl -fsS -O "http://deb.debian.org/debian/pool/main/o/opencv/opencv_$version.orig.tar.xz"
[ -d opencv-4.6.0 ] || tar -xJf "opencv_$version.orig.tar.xz"
# objdetect needs calib3d (and it features2d and flann) in 4.6; Debian's source has no 3rdparty/,
# so everything optional is off and PNG and JPEG come from the system's libraries.
off=(IPP TBB OPENCL LAPACK EIGEN FFMPEG GSTREAMER V4L GTK QT TIFF WEBP OPENJPEG JASPER OPENEXR GDAL
     GDCM PROTOBUF ADE VA 1394 ITT QUIRC IMGCODEC_HDR IMGCODEC_SUNRASTER IMGCODEC_PFM)
cmake -S opencv-4.6.0 -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PWD/install" \
  -DBUILD_LIST="${OPENCV_MODULES:-core,imgproc,flann,features2d,calib3d,objdetect,imgcodecs,videoio}" \
  $(printf -- '-DWITH_%s=OFF ' "${off[@]}") \
  -DBUILD_ITT=OFF -DCV_TRACE=OFF -DBUILD_TESTS=OFF -DBUILD_PERF_TESTS=OFF -DBUILD_EXAMPLES=OFF \
  -DBUILD_opencv_apps=OFF -DBUILD_JAVA=OFF -DBUILD_opencv_python3=OFF -DOPENCV_GENERATE_PKGCONFIG=OFF
cmake --build build --target install
