// The Live demo page's model (no widgets; tests drive it): runs the live pipeline on a worker
// thread, never the GUI thread, and hands each annotated frame to the view by a signal. Pause,
// Grad-CAM, smoothing, snapshot and recording are requests the worker picks up between frames.
#pragma once

#include <QImage>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

#include <atomic>
#include <memory>
#include <mutex>

namespace cnnstudio::ui {

struct LiveSettings {
    QString source;              // camera:N | video:FILE | folder:DIR
    QString model;               // a shipped model's name, a model folder or a run folder
    QString backend = "cpu";
    int smoothingFrames = 10;
    bool gradCam = false;
    // Play files at their own frame rate (a camera sets its own pace); off: as fast as possible.
    bool paceToSourceRate = true;
};

// What the status line shows for one frame.
struct LiveFrameStats {
    long long frame = 0;
    int faces = 0;
    double framesPerSecond = 0;
    double captureMs = 0, detectMs = 0, inferMs = 0, drawMs = 0;
    QString mainEmotion;  // the main face's smoothed emotion; empty without a face
    double mainConfidence = 0;
};

class LiveSession : public QObject {
    Q_OBJECT
public:
    explicit LiveSession(QObject* parent = nullptr);
    ~LiveSession() override;  // stops the worker and waits for it

    void start(const LiveSettings& settings);  // stops a running one first
    void stop();                                // returns once the worker has ended
    bool isRunning() const;

    void setPaused(bool paused);
    bool isPaused() const { return paused_; }
    void setGradCam(bool on);
    void setSmoothingFrames(int frames);
    // Saved by the worker from the next frame; snapshotSaved or failed says how it went.
    void requestSnapshot(const QString& pngFile);
    void startRecording(const QString& videoFile);
    void stopRecording();
    bool isRecording() const { return recording_; }

    // The camera indices OpenCV can open here (empty on servers, CI, containers).
    static QList<int> cameras();

signals:
    void frameReady(const QImage& annotated, const cnnstudio::ui::LiveFrameStats& stats);
    void message(const QString& text);  // a camera lost, a source at its end, a recording saved
    void failed(const QString& text);   // the pipeline could not start or stopped on an error
    void snapshotSaved(const QString& file);
    void recordingSaved(const QString& file);
    void runningChanged(bool running);

private:
    void runPipeline(LiveSettings settings);  // on the worker thread

    QThread* worker_ = nullptr;
    std::atomic<bool> stopRequested_{false}, paused_{false}, gradCam_{false}, recording_{false};
    std::atomic<int> smoothingFrames_{10};
    std::mutex requestsMutex_;
    QString snapshotFile_, recordingFile_;  // pending requests, under requestsMutex_
    bool recordingStopRequested_ = false;
};

}  // namespace cnnstudio::ui

Q_DECLARE_METATYPE(cnnstudio::ui::LiveFrameStats)
