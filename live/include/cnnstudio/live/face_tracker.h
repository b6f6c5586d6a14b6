// Keeps each face's identity across frames and smooths its prediction. A detection joins the
// track whose last box overlaps it most (intersection over union, greedily from the best pair);
// a detection that overlaps none starts a new track. A track's smoothed probabilities are the
// mean of its last N predictions (Arriaga et al. smooth over about 10 frames), so a label does
// not flicker from one frame to the next.
#pragma once

#include <deque>
#include <vector>

#include <opencv2/core.hpp>

namespace cnnstudio::live {

struct TrackerOptions {
    int smoothingFrames = 10;   // predictions averaged per face (1: no smoothing)
    double minimumIou = 0.3;    // a detection further from every track starts a new one
    int forgetAfterFrames = 10; // frames a face may go unseen before its track ends
};

double intersectionOverUnion(const cv::Rect& a, const cv::Rect& b);

struct TrackedFace {
    int id = 0;  // 1, 2, ... in order of appearance; never reused
    cv::Rect box;
    std::vector<float> smoothedProbabilities;
};

class FaceTracker {
public:
    explicit FaceTracker(const TrackerOptions& options = {});  // Error on a bad option

    // One frame's detections and their raw probabilities; returns the tracked face of each
    // detection, in the same order.
    std::vector<TrackedFace> update(const std::vector<cv::Rect>& boxes,
                                    const std::vector<std::vector<float>>& probabilities);
    void setSmoothingFrames(int frames);  // Error below 1; applies to the frames from now on
    int smoothingFrames() const { return options_.smoothingFrames; }
    std::size_t trackCount() const { return tracks_.size(); }
    void reset() { tracks_.clear(); }

private:
    struct Track {
        int id;
        cv::Rect box;
        std::deque<std::vector<float>> history;
        int unseenFrames = 0;
    };
    std::vector<int> match(const std::vector<cv::Rect>& boxes) const;  // track index or -1 per box

    TrackerOptions options_;
    std::vector<Track> tracks_;
    int nextId_ = 1;
};

}  // namespace cnnstudio::live
