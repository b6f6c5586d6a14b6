// Writes the live benchmark's input: a 640x480 MJPG video of a real face (opencv-doc's
// messi5.jpg) moving as before a webcam. Usage: face_video OUT.avi [FRAMES] [FACES]
#include <cstdio>
#include <string>

#include "live/face_video.h"

int main(int argc, char** argv) {
    if (argc < 2 || argc > 4) {
        std::fprintf(stderr, "usage: face_video OUT.avi [FRAMES (300)] [FACES (1 or 2)]\n");
        return 2;
    }
    try {
        const int frames = argc > 2 ? std::stoi(argv[2]) : 300;
        const int faces = argc > 3 ? std::stoi(argv[3]) : 1;
        cnnstudio::live_testing::makeFaceVideo(argv[1], frames, faces);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "face_video: %s\n", error.what());
        return 1;
    }
    return 0;
}
