// The live pipeline on videos made at test time from a real photograph of a face: predictions
// equal `cnnstudio-train predict` on the same crops, each face keeps its track id, smoothing
// averages the last N predictions, Grad-CAM maps, the no-camera and lost-camera paths, and
// cnnstudio-live's video, log and benchmark.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cnnstudio/error.h"
#include "cnnstudio/live/emotion_classifier.h"
#include "cnnstudio/live/face_crop.h"
#include "cnnstudio/live/face_tracker.h"
#include "cnnstudio/live/frame_source.h"
#include "cnnstudio/live/live_output.h"
#include "cnnstudio/live/live_pipeline.h"
#include "e2e/run_process.h"
#include "live/live_test_support.h"

namespace cnnstudio::live {
namespace {

using namespace live_testing;

std::vector<FrameResult> runVideo(const std::filesystem::path& video, EmotionClassifier& classifier,
                                  const PipelineOptions& options = {}) {
    VideoFileSource source(video);
    LivePipeline pipeline(classifier, options);
    std::vector<FrameResult> results;
    while (std::optional<cv::Mat> frame = source.nextFrame()) results.push_back(pipeline.process(*frame));
    return results;
}

std::vector<nlohmann::json> jsonLines(const std::string& text) {
    std::vector<nlohmann::json> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);)
        if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
    return lines;
}

class LivePipelineTest : public ::testing::Test {
protected:
    void SetUp() override {
        folder_ = scratchFolder(::testing::UnitTest::GetInstance()->current_test_info()->name());
        model_ = makeFerShapedModel(folder_ / "model");
        BackendOptions oneThread;  // as the live demo runs it
        oneThread.threads = 1;
        backend_ = createBackend("cpu", oneThread);
        classifier_ = std::make_unique<EmotionClassifier>(model_, *backend_);
    }
    std::filesystem::path folder_, model_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<EmotionClassifier> classifier_;
};

TEST_F(LivePipelineTest, FindsTheFaceInEveryFrameAndKeepsItsTrack) {
    const std::vector<FrameResult> results = runVideo(makeFaceVideo(folder_ / "face.avi", 20), *classifier_);
    ASSERT_EQ(results.size(), 20u);
    for (const FrameResult& result : results) {
        ASSERT_EQ(result.faces.size(), 1u) << "frame " << result.index;
        EXPECT_EQ(result.faces[0].trackId, 1) << "frame " << result.index;
        EXPECT_EQ(result.faces[0].crop.size(), cv::Size(48, 48));
        EXPECT_EQ(result.faces[0].crop.channels(), 1);
    }
    // The face moves two pixels right and one down a frame; so does its box.
    EXPECT_NEAR(results.back().faces[0].box.x - results.front().faces[0].box.x, 38, 12);
}

TEST_F(LivePipelineTest, TwoFacesKeepTwoIdentities) {
    PipelineOptions options;
    options.detector.detectionWidth = 640;  // the half-size faces are too small at 320
    const std::vector<FrameResult> results = runVideo(makeFaceVideo(folder_ / "two.avi", 16, 2), *classifier_, options);
    std::map<int, int> leftOrRightOfTrack;  // track id -> 0 left, 1 right
    for (const FrameResult& result : results) {
        ASSERT_EQ(result.faces.size(), 2u) << "frame " << result.index;
        for (const FaceResult& face : result.faces) {
            const int side = face.box.x < 320 ? 0 : 1;
            auto [at, inserted] = leftOrRightOfTrack.emplace(face.trackId, side);
            EXPECT_EQ(at->second, side) << "track " << face.trackId << " changed side at frame " << result.index;
        }
    }
    EXPECT_EQ(leftOrRightOfTrack.size(), 2u);
}

TEST_F(LivePipelineTest, PredictionsEqualPredictOnTheSameCrops) {
    const std::vector<FrameResult> results = runVideo(makeFaceVideo(folder_ / "face.avi", 6), *classifier_);
    std::vector<std::string> command = {CNNSTUDIO_TRAIN_BINARY, "predict", model_.string()};
    std::vector<const FaceResult*> faces;
    for (const FrameResult& result : results)
        for (const FaceResult& face : result.faces) {
            const std::filesystem::path crop = folder_ / ("crop" + std::to_string(faces.size()) + ".png");
            ASSERT_TRUE(cv::imwrite(crop.string(), face.crop));
            command.push_back(crop.string());
            faces.push_back(&face);
        }
    ASSERT_EQ(faces.size(), 6u);
    command.insert(command.end(), {"--backend", "cpu", "--logits"});
    const e2e::ProcessResult predicted = e2e::runProcess(command, folder_.string());
    ASSERT_EQ(predicted.exitCode, 0) << predicted.err;
    const std::vector<nlohmann::json> lines = jsonLines(predicted.out);
    ASSERT_EQ(lines.size(), faces.size()) << predicted.out;
    for (std::size_t i = 0; i < faces.size(); ++i) {
        const std::vector<float> logits = lines[i].at("logits").get<std::vector<float>>();
        ASSERT_EQ(logits.size(), faces[i]->raw.logits.size());
        for (std::size_t c = 0; c < logits.size(); ++c)
            EXPECT_NEAR(faces[i]->raw.logits[c], logits[c], 1e-4) << "face " << i << " class " << c;
    }
}

TEST_F(LivePipelineTest, AllFacesOfAFrameAsOneBatchGiveEachFacesOwnPrediction) {
    const FrameResult two = runVideo(makeFaceVideo(folder_ / "two.avi", 1, 2), *classifier_,
                                     [] { PipelineOptions o; o.detector.detectionWidth = 640; return o; }())
                                .front();
    ASSERT_EQ(two.faces.size(), 2u);
    for (const FaceResult& face : two.faces) {
        std::vector<float> input(48 * 48);
        cropToInput(face.crop, classifier_->normalization(), input);
        const FacePrediction alone = classifier_->classify({input}).front();
        for (std::size_t c = 0; c < alone.logits.size(); ++c) EXPECT_NEAR(face.raw.logits[c], alone.logits[c], 1e-4);
    }
}

TEST_F(LivePipelineTest, SmoothedProbabilitiesAreTheMeanOfTheLastFramesRaw) {
    PipelineOptions options;
    options.tracker.smoothingFrames = 4;
    const std::vector<FrameResult> results = runVideo(makeFaceVideo(folder_ / "face.avi", 10), *classifier_, options);
    ASSERT_EQ(results.size(), 10u);
    for (std::size_t frame = 0; frame < results.size(); ++frame) {
        const std::size_t first = frame >= 3 ? frame - 3 : 0;
        for (std::size_t c = 0; c < kEmotions.size(); ++c) {
            double mean = 0;
            for (std::size_t k = first; k <= frame; ++k) mean += results[k].faces.at(0).raw.probabilities[c];
            mean /= double(frame - first + 1);
            EXPECT_NEAR(results[frame].faces[0].smoothedProbabilities[c], mean, 1e-6) << "frame " << frame;
        }
    }
}

TEST_F(LivePipelineTest, GradCamGivesAMapOfTheLastConvolutionInZeroToOne) {
    PipelineOptions options;
    options.gradCam = true;
    const std::vector<FrameResult> results = runVideo(makeFaceVideo(folder_ / "face.avi", 2), *classifier_, options);
    EXPECT_EQ(classifier_->explainedLayer(), "conv_out");
    for (const FrameResult& result : results) {
        const cv::Mat& map = result.faces.at(0).gradCam;
        ASSERT_EQ(map.size(), cv::Size(3, 3));
        double low = 0, high = 0;
        cv::minMaxLoc(map, &low, &high);
        EXPECT_GE(low, 0.0);
        EXPECT_LE(high, 1.0);
    }
}

TEST(GradCamMap, WeighsEachMapByItsMeanGradientAndKeepsThePositivePart) {
    // Two 1x2 maps: alpha = (mean(1, 3), mean(-1, -1)) = (2, -1); 2*(1, 2) - (4, 0) = (-2, 4).
    const std::vector<float> activation = {1, 2, 4, 0}, gradient = {1, 3, -1, -1};
    const cv::Mat map = gradCamMap(activation, gradient, 2, 1, 2);
    EXPECT_FLOAT_EQ(map.at<float>(0, 0), 0.0f);
    EXPECT_FLOAT_EQ(map.at<float>(0, 1), 1.0f);
    EXPECT_THROW(gradCamMap(activation, gradient, 3, 1, 2), Error);
}

TEST(FaceTracker, SmoothsOverTheLastNPredictionsOfATrack) {
    FaceTracker tracker({3, 0.3, 10});
    const cv::Rect box(100, 100, 50, 50);
    std::vector<TrackedFace> faces;
    for (float p : {0.0f, 0.3f, 0.6f, 0.9f}) faces = tracker.update({box}, {{p, 1 - p}});
    EXPECT_NEAR(faces[0].smoothedProbabilities[0], (0.3f + 0.6f + 0.9f) / 3, 1e-6);
    tracker.setSmoothingFrames(1);
    faces = tracker.update({box}, {{0.2f, 0.8f}});
    EXPECT_NEAR(faces[0].smoothedProbabilities[0], 0.2f, 1e-6);
    EXPECT_THROW(tracker.setSmoothingFrames(0), Error);
}

TEST(FaceTracker, MatchesByOverlapStartsNewTracksAndForgetsOldOnes) {
    FaceTracker tracker({10, 0.3, 2});
    const std::vector<float> p = {1, 0};
    auto first = tracker.update({{0, 0, 50, 50}, {200, 0, 50, 50}}, {p, p});
    EXPECT_EQ(first[0].id, 1);
    EXPECT_EQ(first[1].id, 2);
    // Listed the other way round and moved a little: the ids follow the faces.
    auto second = tracker.update({{205, 3, 50, 50}, {4, 2, 50, 50}}, {p, p});
    EXPECT_EQ(second[0].id, 2);
    EXPECT_EQ(second[1].id, 1);
    // A face far from both is new; after three frames unseen, tracks 1 and 2 are gone.
    auto third = tracker.update({{400, 300, 50, 50}}, {p});
    EXPECT_EQ(third[0].id, 3);
    tracker.update({{400, 300, 50, 50}}, {p});
    tracker.update({{400, 300, 50, 50}}, {p});
    EXPECT_EQ(tracker.trackCount(), 1u);
    EXPECT_EQ(tracker.update({{0, 0, 50, 50}}, {p})[0].id, 4);
}

TEST(FrameSources, ParseNamesEveryKindAndRefusesOthers) {
    EXPECT_EQ(parseSourceSpec("camera:1").cameraIndex, 1);
    EXPECT_EQ(parseSourceSpec("video:a.mp4").kind, SourceSpec::Kind::VideoFile);
    EXPECT_EQ(parseSourceSpec("folder:faces").path, "faces");
    for (const char* bad : {"camera:x", "camera:-1", "webcam:0", "video:", "faces"})
        EXPECT_THROW(parseSourceSpec(bad), Error) << bad;
}

TEST(FrameSources, NoCameraSaysSoAndPointsAtTheFileSources) {
    if (!listCameras().empty()) GTEST_SKIP() << "this machine has a camera; the no-camera path needs one without";
    try {
        openFrameSource(parseSourceSpec("camera:0"));
        FAIL() << "opening a camera on a machine without one succeeded";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("no camera"), std::string::npos) << error.what();
        EXPECT_NE(error.hint().find("video:FILE"), std::string::npos) << error.what();
    }
}

TEST(FrameSources, ACameraLostMidStreamThrowsSayingSo) {
    // A camera is a capture that never ends: a short video opened as one plays a camera whose
    // cable is pulled after three frames.
    const std::filesystem::path folder = scratchFolder("camera-lost");
    const std::filesystem::path video = makeFaceVideo(folder / "three.avi", 3);
    CameraSource camera(cv::VideoCapture(video.string()), "camera:0");
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(camera.nextFrame().has_value());
    try {
        camera.nextFrame();
        FAIL() << "a lost camera returned a frame";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("lost after 3 frames"), std::string::npos) << error.what();
    }
}

TEST(FrameSources, ImageFolderGivesItsImagesInNameOrder) {
    const std::filesystem::path folder = scratchFolder("image-folder");
    cv::imwrite((folder / "b.png").string(), frameWithFaces({{0, 0}}));
    cv::imwrite((folder / "a.jpg").string(), cv::Mat(10, 20, CV_8UC3, cv::Scalar(1, 2, 3)));
    std::ofstream(folder / "notes.txt") << "not an image";
    ImageFolderSource source(folder);
    EXPECT_EQ(source.nextFrame()->size(), cv::Size(20, 10));
    EXPECT_EQ(source.nextFrame()->size(), cv::Size(640, 480));
    EXPECT_FALSE(source.nextFrame().has_value());
    EXPECT_THROW(ImageFolderSource(scratchFolder("empty-folder")), Error);
}

TEST(FrameSources, ImageFolderRefusesADicomFileBeforeOpenCvDecodesIt) {
    // Named .png, "DICM" after a damaged 128-byte preamble: Debian's OpenCV would hand it to
    // GDCM, whose assertion ends the process.
    const std::filesystem::path folder = scratchFolder("image-folder-dicom");
    std::ofstream(folder / "scan.png", std::ios::binary) << std::string(128, '\xff') << "DICMP`";
    ImageFolderSource source(folder);
    try {
        source.nextFrame();
        FAIL() << "a DICOM file was decoded";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), (folder / "scan.png").string());
        EXPECT_NE(error.reason().find("a DICOM file"), std::string::npos) << error.what();
    }
}

TEST(LiveModels, ResolvesModelAndRunFoldersAndNamesWhatItTried) {
    const std::filesystem::path folder = scratchFolder("resolve");
    makeFerShapedModel(folder / "run" / "model");
    EXPECT_EQ(resolveModel((folder / "run").string()), folder / "run" / "model");
    EXPECT_EQ(resolveModel((folder / "run" / "model").string()), folder / "run" / "model");
    EXPECT_THROW(resolveModel("no-such-model-anywhere"), Error);
}

TEST(LiveOutput, SnapshotIsAPngAndUnfinishedRecordingsLeaveNothing) {
    const std::filesystem::path folder = scratchFolder("output");
    const cv::Mat frame = frameWithFaces({{0, 0}});
    saveSnapshot(frame, folder / "snap.png");
    EXPECT_EQ(cv::imread((folder / "snap.png").string()).size(), frame.size());
    {
        VideoRecorder abandoned(folder / "abandoned.mp4", 25, frame.size());
        abandoned.write(frame);
        DetectionLog log(folder / "abandoned.jsonl");
        log.write("{}");
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder), {}), 1) << "only snap.png remains";
    EXPECT_THROW(VideoRecorder(folder / "clip.gif", 25, frame.size()), Error);
}

class LiveProgramTest : public LivePipelineTest {};

TEST_F(LiveProgramTest, WritesTheAnnotatedVideoAndOneLogLinePerFrame) {
    const std::filesystem::path video = makeFaceVideo(folder_ / "face.avi", 12);
    const e2e::ProcessResult run = e2e::runProcess(
        {CNNSTUDIO_LIVE_BINARY, "--source", "video:" + video.string(), "--model", model_.string(), "--output",
         (folder_ / "annotated.mp4").string(), "--log", (folder_ / "detections.jsonl").string(), "--gradcam",
         "--benchmark"},
        folder_.string());
    ASSERT_EQ(run.exitCode, 0) << run.err;
    cv::VideoCapture annotated((folder_ / "annotated.mp4").string());
    ASSERT_TRUE(annotated.isOpened());
    EXPECT_EQ(int(annotated.get(cv::CAP_PROP_FRAME_COUNT)), 12);
    std::ifstream logFile(folder_ / "detections.jsonl");
    const std::vector<nlohmann::json> lines = jsonLines({std::istreambuf_iterator<char>(logFile), {}});
    ASSERT_EQ(lines.size(), 12u);
    for (const nlohmann::json& line : lines) {
        ASSERT_EQ(line.at("faces").size(), 1u) << line.dump();
        const nlohmann::json& face = line["faces"][0];
        EXPECT_EQ(face.at("track"), 1);
        EXPECT_EQ(face.at("box").size(), 4u);
        EXPECT_EQ(face.at("raw").size(), 7u);
        EXPECT_EQ(face.at("smoothed").size(), 7u);
    }
    const nlohmann::json benchmark = jsonLines(run.out).at(0);
    EXPECT_GT(benchmark.at("fps").get<double>(), 0);
    EXPECT_EQ(benchmark.at("frames"), 7);  // 12 less the 5 warm-up frames
    for (const char* stage : {"capture", "detect", "infer", "draw"}) EXPECT_TRUE(benchmark["ms_per_frame"].contains(stage));
}

// A terminal's Ctrl-C (or the app's stop) ends the stream after the frame in progress, with the
// recording finished; the signal reaches only the thread that waits for it, none computing in
// oneDNN or OpenCV (whose threads a handler's frame could land in: oneDNN issue #4845).
TEST_F(LiveProgramTest, StopSignalEndsTheStreamWithTheRecordingFinished) {
    const std::filesystem::path video = makeFaceVideo(folder_ / "long.avi", 600);
    const std::filesystem::path log = folder_ / "detections.jsonl";
    const pid_t pid = e2e::startProcess({CNNSTUDIO_LIVE_BINARY, "--source", "video:" + video.string(), "--model",
                                         model_.string(), "--output", (folder_ / "annotated.mp4").string(), "--log",
                                         log.string()},
                                        folder_.string());
    auto framesLogged = [](const std::filesystem::path& file) {
        std::ifstream logFile(file);
        return std::count(std::istreambuf_iterator<char>(logFile), {}, '\n');
    };
    // The log is written as detections.partial.jsonl and renamed when the stream ends.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (framesLogged(folder_ / "detections.partial.jsonl") < 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const e2e::SignalTakers takers = e2e::threadsTakingSignals(pid, {SIGINT, SIGTERM});
    ::kill(pid, SIGINT);
    const e2e::ProcessResult run = e2e::waitProcess(pid, folder_.string());
    ASSERT_EQ(run.exitCode, 0) << run.err;
    EXPECT_NE(run.err.find("(stopped)"), std::string::npos) << run.err;
    EXPECT_EQ(takers.taking, 1) << "of " << takers.threads << " threads";
    const long long frames = framesLogged(log);
    EXPECT_LT(frames, 600) << "the stream ran to its end: the signal did not stop it";
    cv::VideoCapture annotated((folder_ / "annotated.mp4").string());
    ASSERT_TRUE(annotated.isOpened()) << "the recording was not finished";
    EXPECT_EQ(int(annotated.get(cv::CAP_PROP_FRAME_COUNT)), frames);
}

// The annotated video or the log written over the video being read: refused before any frame.
TEST_F(LiveProgramTest, OutputsOntoTheSourceAreRefused) {
    const std::filesystem::path video = makeFaceVideo(folder_ / "face.avi", 2);
    const auto bytes = std::filesystem::file_size(video);
    for (const char* option : {"--output", "--log"}) {
        const e2e::ProcessResult run = e2e::runProcess({CNNSTUDIO_LIVE_BINARY, "--source", "video:" + video.string(),
                                                        "--model", model_.string(), option, video.string()},
                                                       folder_.string());
        EXPECT_EQ(run.exitCode, 1) << option;
        EXPECT_NE(run.err.find(std::string(option) + " " + video.string()), std::string::npos) << run.err;
        EXPECT_NE(run.err.find("is the same file as --source"), std::string::npos) << run.err;
        EXPECT_EQ(std::filesystem::file_size(video), bytes) << option;
    }
}

// A --log that names a folder was found only after every frame, which were lost.
TEST_F(LiveProgramTest, ALogThatCannotBeWrittenIsRefusedBeforeAnyFrame) {
    const std::filesystem::path video = makeFaceVideo(folder_ / "face.avi", 2);
    std::filesystem::create_directories(folder_ / "logs");
    const e2e::ProcessResult run =
        e2e::runProcess({CNNSTUDIO_LIVE_BINARY, "--source", "video:" + video.string(), "--model", model_.string(),
                         "--log", (folder_ / "logs").string(), "--benchmark"},
                        folder_.string());
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_NE(run.err.find("--log " + (folder_ / "logs").string() + ": is a folder"), std::string::npos) << run.err;
    EXPECT_EQ(run.out.find("fps"), std::string::npos) << "it processed the frames first: " << run.out;
}

// libgomp crashed creating 100000 threads: the option is bounded as cnnstudio-train bounds it.
// Bad usage exits 2, as the help says, not with CLI11's own codes.
TEST_F(LiveProgramTest, ThreadCountBeyondTheMaximumIsRefused) {
    const e2e::ProcessResult run = e2e::runProcess(
        {CNNSTUDIO_LIVE_BINARY, "--source", "folder:" + folder_.string(), "--model", model_.string(), "--threads",
         "100000"},
        folder_.string());
    EXPECT_EQ(run.exitCode, 2) << run.err;
    EXPECT_NE(run.err.find("--threads"), std::string::npos) << run.err;
}

TEST_F(LiveProgramTest, BadUsageExitsWithTwoAndSaysWhy) {
    const e2e::ProcessResult run = e2e::runProcess(
        {CNNSTUDIO_LIVE_BINARY, "--source", "folder:" + folder_.string(), "--model", model_.string(), "--frames", "-1"},
        folder_.string());
    EXPECT_EQ(run.exitCode, 2) << run.err;
    EXPECT_NE(run.err.find("--frames: must be at least 0, not -1"), std::string::npos) << run.err;
}

TEST_F(LiveProgramTest, NoCameraExitsNonZeroWithAClearMessage) {
    if (!listCameras().empty()) GTEST_SKIP() << "this machine has a camera; the no-camera path needs one without";
    const e2e::ProcessResult run =
        e2e::runProcess({CNNSTUDIO_LIVE_BINARY, "--source", "camera:0", "--model", model_.string()}, folder_.string());
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_NE(run.err.find("no camera"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("video:FILE"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace cnnstudio::live
