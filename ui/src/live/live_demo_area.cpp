#include "cnnstudio/ui/live/live_demo_area.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/live/emotion_classifier.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/live/live_frame_view.h"

namespace cnnstudio::ui {

namespace {

// The item data of a picker entry that opens a file dialog instead of naming a choice.
const QString kBrowseVideo = QStringLiteral("browse:video");
const QString kBrowseFolder = QStringLiteral("browse:folder");
const QString kBrowseModel = QStringLiteral("browse:model");

QString picturesFolder() {
    const QString pictures = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    return pictures.isEmpty() ? QDir::homePath() : pictures;
}

QString timestamped(const QString& stem, const QString& extension) {
    return QDir(picturesFolder())
        .filePath(stem + "-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + "." + extension);
}

// Selects the entry with `data`, adding it (shown as `label`) when the picker lacks it.
void selectOrAdd(QComboBox* picker, const QString& label, const QString& data) {
    int index = picker->findData(data);
    if (index < 0) {
        picker->insertItem(0, label, data);
        index = 0;
    }
    picker->setCurrentIndex(index);
}

}  // namespace

LiveDemoArea::LiveDemoArea(QWidget* parent)
    : QWidget(parent), session_(new LiveSession(this)), view_(new LiveFrameView(this)),
      source_(new QComboBox(this)), model_(new QComboBox(this)), backend_(new QComboBox(this)),
      smoothing_(new QSpinBox(this)), gradCam_(new QCheckBox(tr("Grad-CAM overlay"), this)),
      startStop_(new QPushButton(tr("Start"), this)), pause_(new QPushButton(tr("Pause"), this)),
      snapshot_(new QPushButton(tr("Snapshot"), this)), record_(new QPushButton(tr("Record"), this)),
      status_(new QLabel(this)) {
    smoothing_->setRange(1, 60);
    smoothing_->setValue(10);
    smoothing_->setSuffix(tr(" frames"));
    smoothing_->setToolTip(tr("Each face's probabilities are averaged over this many frames"));
    gradCam_->setToolTip(tr("Colours the regions of each face that push its predicted emotion up "
                            "(the gradient of the class score at the last convolution)"));
    pause_->setCheckable(true);
    record_->setCheckable(true);
    for (const std::string& name : availableBackends())
        if (name != "cpu-ref") backend_->addItem(QString::fromStdString(name), QString::fromStdString(name));
    backend_->setCurrentIndex(std::max(0, backend_->findData("cpu")));

    auto* settings = new QFormLayout;
    settings->addRow(tr("Source"), source_);
    settings->addRow(tr("Model"), model_);
    settings->addRow(tr("Backend"), backend_);
    settings->addRow(tr("Smoothing"), smoothing_);
    settings->addRow(QString(), gradCam_);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* button : {startStop_, pause_, snapshot_, record_}) buttons->addWidget(button);
    auto* side = new QVBoxLayout;
    side->addLayout(settings);
    side->addLayout(buttons);
    side->addWidget(status_);
    side->addStretch();
    status_->setWordWrap(true);
    auto* sideWidget = new QWidget(this);
    sideWidget->setLayout(side);
    sideWidget->setMaximumWidth(380);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(sideWidget);
    layout->addWidget(view_, 1);

    fillSources();
    fillModels();
    connect(source_, &QComboBox::activated, this, [this] { browseForSource(); });
    connect(model_, &QComboBox::activated, this, [this] { browseForModel(); });
    connect(startStop_, &QPushButton::clicked, this, [this] { session_->isRunning() ? stop() : start(); });
    connect(pause_, &QPushButton::toggled, session_, &LiveSession::setPaused);
    connect(gradCam_, &QCheckBox::toggled, session_, &LiveSession::setGradCam);
    connect(smoothing_, &QSpinBox::valueChanged, session_, &LiveSession::setSmoothingFrames);
    connect(snapshot_, &QPushButton::clicked, this, &LiveDemoArea::takeSnapshot);
    connect(record_, &QPushButton::clicked, this, &LiveDemoArea::toggleRecording);
    connect(session_, &LiveSession::frameReady, this, [this](const QImage& frame, const LiveFrameStats& stats) {
        view_->showFrame(frame);
        showStats(stats);
    });
    // The end of a file keeps its last frame on show; the news goes to the status lines.
    connect(session_, &LiveSession::message, this, [this](const QString& text) {
        status_->setText(status_->text() + "\n" + text);
        emit message(text);
    });
    connect(session_, &LiveSession::failed, this, [this](const QString& text) {
        view_->showMessage(text);
        status_->setText(text);
        emit message(text);
    });
    connect(session_, &LiveSession::snapshotSaved, this, [this](const QString& file) {
        emit message(tr("Snapshot saved: %1").arg(file));
    });
    connect(session_, &LiveSession::recordingSaved, this, [this](const QString& file) {
        record_->setChecked(false);
        emit message(tr("Recording saved: %1").arg(file));
    });
    connect(session_, &LiveSession::runningChanged, this, [this] { updateButtons(); });
    updateButtons();
}

void LiveDemoArea::fillSources() {
    source_->clear();
    const QList<int> cameras = LiveSession::cameras();
    for (int index : cameras) source_->addItem(tr("Camera %1").arg(index), QStringLiteral("camera:%1").arg(index));
    source_->addItem(tr("Video file..."), kBrowseVideo);
    source_->addItem(tr("Image folder..."), kBrowseFolder);
    if (cameras.isEmpty())
        view_->showMessage(tr("No camera found on this machine. Choose a video file or an image folder as the source."));
    else
        view_->showMessage(tr("Press Start to recognise emotions live."));
}

QStringList LiveDemoArea::shippedModels() {
    QStringList names;
    for (const std::string& name : live::listShippedModels()) names << QString::fromStdString(name);
    return names;
}

void LiveDemoArea::fillModels() {
    const QString current = model_->currentData().toString();
    model_->clear();
    for (const QString& name : shippedModels()) model_->addItem(name, name);
    if (!runsRoot_.isEmpty()) {
        const QFileInfoList runs = QDir(runsRoot_).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time);
        for (const QFileInfo& run : runs) {
            const QString modelFolder = QDir(run.filePath()).filePath(RunFolder::kModelFolderName);
            if (QFileInfo::exists(QDir(modelFolder).filePath(RunFolder::kModelInfoFileName)))
                model_->addItem(tr("Run %1").arg(run.fileName()), modelFolder);
        }
    }
    model_->addItem(tr("Model folder..."), kBrowseModel);
    if (const int index = model_->findData(current); index >= 0) model_->setCurrentIndex(index);
}

void LiveDemoArea::setRunsRoot(const QString& root) {
    runsRoot_ = root;
    fillModels();
}

void LiveDemoArea::chooseSource(const QString& source) {
    const QString label = source.startsWith("camera:") ? source : QFileInfo(source.section(':', 1)).fileName();
    selectOrAdd(source_, label, source);
}

void LiveDemoArea::chooseModel(const QString& model) {
    selectOrAdd(model_, QFileInfo(model).fileName().isEmpty() ? model : QFileInfo(model).fileName(), model);
}

void LiveDemoArea::setGradCam(bool on) { gradCam_->setChecked(on); }

void LiveDemoArea::browseForSource() {
    const QString kind = source_->currentData().toString();
    QString chosen;
    if (kind == kBrowseVideo) {
        const QString file = QFileDialog::getOpenFileName(this, tr("Choose a video"), QDir::homePath(),
                                                          tr("Videos (*.mp4 *.avi *.mkv *.mov *.webm);;All files (*)"));
        if (!file.isEmpty()) chosen = "video:" + file;
    } else if (kind == kBrowseFolder) {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Choose a folder of images"), QDir::homePath());
        if (!folder.isEmpty()) chosen = "folder:" + folder;
    } else {
        return;
    }
    if (chosen.isEmpty()) source_->setCurrentIndex(0);
    else chooseSource(chosen);
}

void LiveDemoArea::browseForModel() {
    if (model_->currentData().toString() != kBrowseModel) return;
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Choose a model folder or a finished run"),
                                                             runsRoot_.isEmpty() ? QDir::homePath() : runsRoot_);
    if (folder.isEmpty()) model_->setCurrentIndex(0);
    else chooseModel(folder);
}

void LiveDemoArea::start() {
    const QString source = source_->currentData().toString();
    const QString model = model_->currentData().toString();
    if (source.startsWith("browse:") || source.isEmpty()) {
        view_->showMessage(tr("Choose a source first: a camera, a video file or an image folder."));
        return;
    }
    if (model.startsWith("browse:") || model.isEmpty()) {
        view_->showMessage(tr("Choose a model first: a shipped model or a finished run."));
        return;
    }
    LiveSettings settings;
    settings.source = source;
    settings.model = model;
    settings.backend = backend_->currentData().toString();
    settings.smoothingFrames = smoothing_->value();
    settings.gradCam = gradCam_->isChecked();
    settings.paceToSourceRate = paceToSourceRate_;
    pause_->setChecked(false);
    previousDrawMs_ = 0;  // a new pipeline has drawn nothing yet
    session_->start(settings);
}

void LiveDemoArea::stop() {
    session_->stop();
    updateButtons();
}

void LiveDemoArea::takeSnapshot() { session_->requestSnapshot(timestamped("cnnstudio-live", "png")); }

void LiveDemoArea::toggleRecording() {
    if (session_->isRecording()) session_->stopRecording();
    else session_->startRecording(timestamped("cnnstudio-live", "mp4"));
    record_->setChecked(session_->isRecording());
}

QString LiveDemoArea::statusText() const { return status_->text(); }

void LiveDemoArea::showStats(const LiveFrameStats& stats) {
    // Frames count from 1 here; the rate needs two frames, so the first has none rather than 0.0.
    const QString faces = countOf(stats.faces, tr("face"), tr("faces"));
    QString text = stats.framesPerSecond > 0
                       ? tr("%1 FPS, frame %2, %3").arg(stats.framesPerSecond, 0, 'f', 1).arg(stats.frame + 1).arg(faces)
                       : tr("Frame %1, %2").arg(stats.frame + 1).arg(faces);
    if (!stats.mainEmotion.isEmpty())
        text += tr("\nMain face: %1 (%2%)").arg(stats.mainEmotion).arg(100.0 * stats.mainConfidence, 0, 'f', 0);
    // A frame's drawing time is known only once it is drawn, so the frame itself shows the previous
    // frame's; the panel shows the same figure, so the two never disagree.
    text += tr("\nLatency: capture %1, detect %2, infer %3, draw %4 ms (previous frame)")
                .arg(stats.captureMs, 0, 'f', 1)
                .arg(stats.detectMs, 0, 'f', 1)
                .arg(stats.inferMs, 0, 'f', 1)
                .arg(previousDrawMs_, 0, 'f', 1);
    previousDrawMs_ = stats.drawMs;
    status_->setText(text);
}

void LiveDemoArea::updateButtons() {
    const bool running = session_->isRunning();
    startStop_->setText(running ? tr("Stop") : tr("Start"));
    for (QWidget* control : {static_cast<QWidget*>(source_), static_cast<QWidget*>(model_), static_cast<QWidget*>(backend_)})
        control->setEnabled(!running);
    pause_->setEnabled(running);
    snapshot_->setEnabled(running);
    record_->setEnabled(running);
    if (!running) record_->setChecked(false);
}

}  // namespace cnnstudio::ui
