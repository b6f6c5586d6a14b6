// The Live demo page: pick a source (a camera OpenCV can open, a video file, an image folder), a
// model (a shipped one by name, or any finished run), a backend, the smoothing and Grad-CAM;
// start, pause, take snapshots and record. The work runs in a LiveSession (worker thread).
#pragma once

#include <QStringList>
#include <QWidget>

#include "cnnstudio/ui/live/live_session.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace cnnstudio::ui {

class LiveFrameView;

class LiveDemoArea : public QWidget {
    Q_OBJECT
public:
    explicit LiveDemoArea(QWidget* parent = nullptr);

    // The names of the models shipped with the app (resources/models).
    static QStringList shippedModels();
    // Finished runs under this folder are offered as models.
    void setRunsRoot(const QString& root);
    // Choosing in code what a user chooses with the pickers (tests, the screenshot tour).
    void chooseSource(const QString& source);  // camera:N, video:FILE or folder:DIR
    void chooseModel(const QString& model);    // a shipped model's name or a folder
    void setGradCam(bool on);
    void setPaceToSourceRate(bool on) { paceToSourceRate_ = on; }
    void start();
    void stop();

    LiveSession* session() const { return session_; }
    LiveFrameView* view() const { return view_; }
    QString statusText() const;
    QComboBox* sourcePicker() const { return source_; }
    QComboBox* modelPicker() const { return model_; }
    QComboBox* backendPicker() const { return backend_; }
    QPushButton* snapshotButton() const { return snapshot_; }
    QPushButton* recordButton() const { return record_; }
    QPushButton* pauseButton() const { return pause_; }

signals:
    void message(const QString& text);

private:
    void fillSources();
    void fillModels();
    void browseForSource();
    void browseForModel();
    void takeSnapshot();
    void toggleRecording();
    void showStats(const LiveFrameStats& stats);
    void updateButtons();

    LiveSession* session_;
    LiveFrameView* view_;
    QComboBox *source_, *model_, *backend_;
    QSpinBox* smoothing_;
    QCheckBox* gradCam_;
    QPushButton *startStop_, *pause_, *snapshot_, *record_;
    QLabel* status_;
    QString runsRoot_;
    bool paceToSourceRate_ = true;
    double previousDrawMs_ = 0;  // what the frame on show says it took to draw: the previous frame's
};

}  // namespace cnnstudio::ui
