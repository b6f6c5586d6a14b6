#include <opencv2/imgcodecs.hpp>
#include <filesystem>
#include <cstdio>
int count() { int n = 0; for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) { (void)e; ++n; } return n; }
int main(int argc, char** argv) {
  int before = count();
  for (int i = 0; i < 100; ++i) { try { cv::imread(argv[1], cv::IMREAD_GRAYSCALE); } catch (...) {} }
  std::printf("%s: fds before %d after 100 imreads %d\n", argv[1], before, count());
}
