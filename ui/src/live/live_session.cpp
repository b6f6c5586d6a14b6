#include "cnnstudio/ui/live/live_session.h"

#include <chrono>
#include <optional>
#include <thread>

#include <QDir>
#include <QFileInfo>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/live/emotion_classifier.h"
#include "cnnstudio/live/frame_source.h"
#include "cnnstudio/live/live_output.h"
#include "cnnstudio/live/live_pipeline.h"
#include "cnnstudio/run_folder.h"

namespace cnnstudio::ui {

namespace {

// The model to load, resolved as cnnstudio-live does; its hints name command-line arguments
// (RUN_DIR, --resume), so the page gives its own, in terms of its Model list and Run history.
std::filesystem::path resolveModelForPage(const QString& model) {
    try {
        return live::resolveModel(model.toStdString());
    } catch (const Error& error) {
        const bool unfinishedRun = QFileInfo::exists(QDir(model).filePath(RunFolder::kConfigFileName));
        const QString hint =
            unfinishedRun ? QObject::tr("the run gets its model when it finishes: resume it from Run history")
                          : QObject::tr("choose a shipped model, a finished run's folder or a model folder (one "
                                        "holding model.json) in the Model list");
        throw Error(error.reason(), error.where(), hint.toStdString());
    }
}

using Clock = std::chrono::steady_clock;

QImage toQImage(const cv::Mat& bgr) {
    return QImage(bgr.data, bgr.cols, bgr.rows, int(bgr.step), QImage::Format_BGR888).copy();
}

LiveFrameStats statsOf(const live::FrameResult& result, const std::vector<std::string>& classNames) {
    LiveFrameStats stats;
    stats.frame = result.index;
    stats.faces = int(result.faces.size());
    stats.framesPerSecond = result.framesPerSecond;
    stats.captureMs = result.timings.captureMs;
    stats.detectMs = result.timings.detectMs;
    stats.inferMs = result.timings.inferMs;
    stats.drawMs = result.timings.drawMs;
    if (!result.faces.empty()) {
        const live::FaceResult& main = result.faces.front();
        stats.mainEmotion = QString::fromStdString(classNames.at(std::size_t(main.smoothedClass)));
        stats.mainConfidence = main.smoothedProbabilities.at(std::size_t(main.smoothedClass));
    }
    return stats;
}

}  // namespace

LiveSession::LiveSession(QObject* parent) : QObject(parent) {
    qRegisterMetaType<LiveFrameStats>();
}

LiveSession::~LiveSession() { stop(); }

QList<int> LiveSession::cameras() {
    QList<int> found;
    for (int index : live::listCameras()) found << index;
    return found;
}

bool LiveSession::isRunning() const { return worker_ && worker_->isRunning(); }

void LiveSession::start(const LiveSettings& settings) {
    stop();
    stopRequested_ = false;
    paused_ = false;
    gradCam_ = settings.gradCam;
    smoothingFrames_ = settings.smoothingFrames;
    worker_ = QThread::create([this, settings] { runPipeline(settings); });
    connect(worker_, &QThread::finished, this, [this] { emit runningChanged(false); });
    worker_->start();
    emit runningChanged(true);
}

void LiveSession::stop() {
    if (!worker_) return;
    stopRequested_ = true;
    worker_->wait();
    delete worker_;
    worker_ = nullptr;
}

void LiveSession::setPaused(bool paused) { paused_ = paused; }
void LiveSession::setGradCam(bool on) { gradCam_ = on; }
void LiveSession::setSmoothingFrames(int frames) { smoothingFrames_ = frames; }

void LiveSession::requestSnapshot(const QString& pngFile) {
    std::lock_guard lock(requestsMutex_);
    snapshotFile_ = pngFile;
}

void LiveSession::startRecording(const QString& videoFile) {
    std::lock_guard lock(requestsMutex_);
    recordingFile_ = videoFile;
    recordingStopRequested_ = false;
    recording_ = true;
}

void LiveSession::stopRecording() {
    std::lock_guard lock(requestsMutex_);
    recordingStopRequested_ = true;
}

void LiveSession::runPipeline(LiveSettings settings) {
    std::optional<live::VideoRecorder> recorder;
    auto finishRecording = [&] {
        if (!recorder) return;
        recorder->finish();
        emit recordingSaved(QString::fromStdString(recorder->file().string()));
        recorder.reset();
        recording_ = false;
    };
    try {
        std::unique_ptr<live::FrameSource> source =
            live::openFrameSource(live::parseSourceSpec(settings.source.toStdString()));
        // One CPU thread, as cnnstudio-live: a few 48x48 faces are too little work to share.
        BackendOptions backendOptions;
        backendOptions.threads = 1;
        std::unique_ptr<Backend> backend = createBackend(settings.backend.toStdString(), backendOptions);
        live::EmotionClassifier classifier(resolveModelForPage(settings.model), *backend);
        live::PipelineOptions options;
        options.tracker.smoothingFrames = settings.smoothingFrames;
        options.gradCam = settings.gradCam;
        live::LivePipeline pipeline(classifier, options);
        const double sourceRate = source->nominalFramesPerSecond();
        const bool pace = settings.paceToSourceRate && !source->isCamera() && sourceRate > 0 && sourceRate < 240;
        // An image folder shows each image for a while; a video plays at its own rate.
        const auto framePeriod = std::chrono::duration<double>(pace ? 1.0 / sourceRate : 0.0);
        cv::Mat lastFrame;
        auto takeSnapshotRequest = [&] {
            QString snapshot;
            {
                std::lock_guard lock(requestsMutex_);
                std::swap(snapshot, snapshotFile_);
            }
            if (snapshot.isEmpty() || lastFrame.empty()) return;
            live::saveSnapshot(lastFrame, snapshot.toStdString());
            emit snapshotSaved(snapshot);
        };
        bool ended = false;
        while (!stopRequested_) {
            const Clock::time_point started = Clock::now();
            if (paused_ && !lastFrame.empty()) {
                takeSnapshotRequest();  // of the frame on show
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                continue;
            }
            std::optional<cv::Mat> frame = source->nextFrame();
            if (!frame) {
                ended = true;
                break;
            }
            const double captureMs = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
            pipeline.setGradCam(gradCam_);
            pipeline.setSmoothingFrames(smoothingFrames_);
            const live::FrameResult result = pipeline.process(*frame, captureMs);
            lastFrame = result.annotated;
            takeSnapshotRequest();
            QString recordTo;
            bool stopRecordingNow = false;
            {
                std::lock_guard lock(requestsMutex_);
                std::swap(recordTo, recordingFile_);
                std::swap(stopRecordingNow, recordingStopRequested_);
            }
            if (!recordTo.isEmpty()) {
                finishRecording();
                recorder.emplace(recordTo.toStdString(), sourceRate > 0 && sourceRate < 240 ? sourceRate : 25.0,
                                 result.annotated.size());
                recording_ = true;
            }
            if (recorder) recorder->write(result.annotated);
            if (stopRecordingNow) finishRecording();
            emit frameReady(toQImage(result.annotated), statsOf(result, classifier.classNames()));
            if (pace) std::this_thread::sleep_until(started + std::chrono::duration_cast<Clock::duration>(framePeriod));
        }
        finishRecording();
        if (ended) emit message(tr("The source has no more frames: %1").arg(QString::fromStdString(source->description())));
    } catch (const std::exception& error) {
        recording_ = false;
        emit failed(QString::fromStdString(error.what()));
    }
}

}  // namespace cnnstudio::ui
