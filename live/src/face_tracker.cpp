#include "cnnstudio/live/face_tracker.h"

#include <algorithm>

#include "cnnstudio/error.h"

namespace cnnstudio::live {

double intersectionOverUnion(const cv::Rect& a, const cv::Rect& b) {
    const double overlap = (a & b).area();
    const double united = double(a.area()) + double(b.area()) - overlap;
    return united > 0 ? overlap / united : 0.0;
}

FaceTracker::FaceTracker(const TrackerOptions& options) : options_(options) {
    setSmoothingFrames(options.smoothingFrames);
    if (options.minimumIou <= 0 || options.minimumIou > 1 || options.forgetAfterFrames < 0)
        throw Error("tracker options out of range (0 < minimum IoU <= 1, forget after >= 0 frames)", "face tracker");
}

void FaceTracker::setSmoothingFrames(int frames) {
    if (frames < 1)
        throw Error("smoothing needs at least 1 frame, got " + std::to_string(frames), "face tracker",
                    "1 shows each frame's own prediction");
    options_.smoothingFrames = frames;
}

std::vector<int> FaceTracker::match(const std::vector<cv::Rect>& boxes) const {
    struct Pair {
        double iou;
        std::size_t box, track;
    };
    std::vector<Pair> pairs;
    for (std::size_t b = 0; b < boxes.size(); ++b)
        for (std::size_t t = 0; t < tracks_.size(); ++t)
            if (double iou = intersectionOverUnion(boxes[b], tracks_[t].box); iou >= options_.minimumIou)
                pairs.push_back({iou, b, t});
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.iou > b.iou; });
    std::vector<int> trackOfBox(boxes.size(), -1);
    std::vector<bool> trackTaken(tracks_.size(), false);
    for (const Pair& pair : pairs) {
        if (trackOfBox[pair.box] >= 0 || trackTaken[pair.track]) continue;
        trackOfBox[pair.box] = int(pair.track);
        trackTaken[pair.track] = true;
    }
    return trackOfBox;
}

std::vector<TrackedFace> FaceTracker::update(const std::vector<cv::Rect>& boxes,
                                             const std::vector<std::vector<float>>& probabilities) {
    if (boxes.size() != probabilities.size())
        throw Error(std::to_string(probabilities.size()) + " predictions for " + std::to_string(boxes.size()) + " faces",
                    "face tracker");
    const std::vector<int> trackOfBox = match(boxes);
    for (Track& track : tracks_) ++track.unseenFrames;
    std::vector<std::size_t> indexOfBox(boxes.size());
    for (std::size_t b = 0; b < boxes.size(); ++b) {
        std::size_t index;
        if (trackOfBox[b] >= 0) {
            index = std::size_t(trackOfBox[b]);
        } else {
            index = tracks_.size();
            tracks_.push_back({nextId_++, boxes[b], {}, 0});
        }
        Track& track = tracks_[index];
        track.box = boxes[b];
        track.unseenFrames = 0;
        track.history.push_back(probabilities[b]);
        while (int(track.history.size()) > options_.smoothingFrames) track.history.pop_front();
        indexOfBox[b] = index;
    }
    std::vector<TrackedFace> faces;
    for (std::size_t b = 0; b < boxes.size(); ++b) {
        const Track& track = tracks_[indexOfBox[b]];
        TrackedFace face{track.id, track.box, std::vector<float>(probabilities[b].size(), 0.0f)};
        for (const std::vector<float>& past : track.history)
            for (std::size_t c = 0; c < face.smoothedProbabilities.size() && c < past.size(); ++c)
                face.smoothedProbabilities[c] += past[c] / float(track.history.size());
        faces.push_back(std::move(face));
    }
    std::erase_if(tracks_, [&](const Track& track) { return track.unseenFrames > options_.forgetAfterFrames; });
    return faces;
}

}  // namespace cnnstudio::live
