#include "cnnstudio/ui/training/train_area.h"

#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "cnnstudio/error.h"
#include "cnnstudio/host_memory.h"
#include "cnnstudio/ui/history/run_catalogue.h"
#include "cnnstudio/ui/training/dataset_picker.h"
#include "cnnstudio/ui/training/dataset_preview.h"
#include "cnnstudio/ui/training/hardware_picker.h"
#include "cnnstudio/ui/training/memory_fit.h"
#include "cnnstudio/ui/training/network_fit_notice.h"
#include "cnnstudio/ui/training/run_settings_panel.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_session.h"

namespace cnnstudio::ui {

TrainArea::TrainArea(TrainingSession* session, QWidget* parent) : QWidget(parent), session_(session) {
    settings_ = new RunSettingsPanel(this);
    settings_->setObjectName("runSettings");
    dashboard_ = new TrainingDashboard(this);
    dashboard_->setObjectName("trainingDashboard");
    dashboard_->setRunControlsVisible(true);
    dashboard_->setRun(session_->liveRun());
    train_ = new QPushButton(tr("Train"), this);
    train_->setObjectName("trainButton");
    train_->setToolTip(tr("Train the network of the Design page with these settings (F5)"));
    QFont bold = train_->font();
    bold.setBold(true);
    train_->setFont(bold);
    train_->setMinimumHeight(32);
    fitNotice_ = new NetworkFitNotice(this);
    fitNotice_->setObjectName("networkFitNotice");
    prediction_ = new QLabel(this);
    prediction_->setObjectName("predictedRunTime");
    prediction_->setWordWrap(true);
    prediction_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    measure_ = new QPushButton(tr("Measure speed (a few seconds)"), this);
    measure_->setObjectName("measureSpeed");
    measure_->setToolTip(tr("Run cnnstudio-bench --probe on these settings to predict the run time"));
    probe_ = new RunTimeProbe(this);
    try {
        reportFolder_ = hardwareReportFolder();
    } catch (const Error& error) {
        prediction_->setToolTip(QString::fromStdString(error.what()));  // no HOME: predictions come from probes only
    }

    auto* left = new QWidget(this);
    left->setMinimumWidth(320);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(settings_, 1);
    leftLayout->addWidget(fitNotice_);
    leftLayout->addWidget(prediction_);
    leftLayout->addWidget(measure_);
    leftLayout->addWidget(train_);
    auto* columns = new QSplitter(Qt::Horizontal, this);
    columns->addWidget(left);
    columns->addWidget(dashboard_);
    columns->setStretchFactor(0, 0);
    columns->setStretchFactor(1, 1);
    columns->setSizes({470, 970});
    columns->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(columns);
    connect(train_, &QPushButton::clicked, this, &TrainArea::trainRequested);

    TrainingController* controller = session_->controller();
    connect(controller, &TrainingController::stateChanged, this, &TrainArea::refreshRunControls);
    connect(controller, &TrainingController::runFailed, dashboard_, &TrainingDashboard::showFailure);
    // A new or resumed run starts without the previous run's failure on show.
    connect(session_, &TrainingSession::launching, dashboard_, [this] { dashboard_->showFailure({}, {}); });
    connect(dashboard_, &TrainingDashboard::stopRequested, session_, &TrainingSession::stop);
    connect(dashboard_, &TrainingDashboard::killRequested, this, &TrainArea::killAfterAsking);
    connect(dashboard_, &TrainingDashboard::resumeRequested, this, [this] { emit resumeRequested(resumableRun_); });
    connect(session_, &TrainingSession::launching, this, [this] {
        resumableRun_.clear();
        dashboard_->setResumable(false);
    });
    // Offered when Run history would offer it: the run stopped or ended early and left a checkpoint.
    connect(session_, &TrainingSession::runEnded, this, [this](const QString& runDirectory) {
        resumableRun_ = readRunRecord(runDirectory).resumable ? runDirectory : QString();
        dashboard_->setResumable(!resumableRun_.isEmpty());
    });
    connect(settings_->datasetPicker(), &DatasetPicker::previewUpdated, this, &TrainArea::refreshFit);
    connect(settings_, &RunSettingsPanel::settingsChanged, this, &TrainArea::refreshFit);
    connect(measure_, &QPushButton::clicked, this, &TrainArea::startProbe);
    connect(probe_, &RunTimeProbe::measured, this, &TrainArea::keepProbe);
    connect(probe_, &RunTimeProbe::failed, this, [this](const QString& reason) {
        measure_->setEnabled(true);
        prediction_->setText(tr("Predicted run time: the probe failed: %1").arg(reason));
    });
    refreshRunControls();
    refreshPrediction();
}

void TrainArea::setHardwareReportFolder(const std::filesystem::path& folder) {
    reportFolder_ = folder;
    refreshPrediction();
}

RunSettings TrainArea::settingsForRun() const {
    RunSettings settings = settings_->settings();
    settings.prediction = estimate_.forWorker();
    return settings;
}

void TrainArea::refreshPrediction() {
    const RunSettings settings = settings_->settings();
    const DatasetSummary& data = settings_->datasetPicker()->preview()->summary();
    estimate_ = {};
    const NetworkSpec trained = trainedNetwork();
    // A probe of this very network first: another network's benchmark is only scaled by FLOPs.
    if (const auto probe = probeOf(probeKey(trained, settings)))
        estimate_ = estimateRunTime(trained, settings, data, *probe,
                                    tr("a probe of this network, %1").arg(QString::fromStdString(probe->created)));
    if (!estimate_.prediction && !reportFolder_.empty())
        estimate_ = estimateRunTimeFromFolder(trained, settings, data, reportFolder_);
    prediction_->setText(estimate_.text);
    measure_->setVisible(estimate_.needsProbe);
    measure_->setEnabled(!probe_->isRunning());
}

NetworkSpec TrainArea::trainedNetwork() const { return fit_.known && fit_.canTrain() ? fit_.trainedSpec : network_; }

std::optional<BenchReport> TrainArea::probeOf(const QString& key) {
    if (const auto it = sessionProbes_.find(key); it != sessionProbes_.end()) return it->second;
    if (reportFolder_.empty()) return std::nullopt;
    // Every settings change asks again: a kept probe is read from disk once.
    std::optional<BenchReport> kept = keptProbeReport(reportFolder_ / "probes", key);
    if (kept) sessionProbes_[key] = *kept;
    return kept;
}

void TrainArea::keepProbe(const BenchReport& report) {
    sessionProbes_[runningProbeKey_] = report;
    if (!reportFolder_.empty()) {
        try {
            keepProbeReport(reportFolder_ / "probes", runningProbeKey_, report);
        } catch (const Error& error) {
            // This session still uses it; the next one measures again.
            prediction_->setToolTip(tr("The probe could not be kept for later sessions: %1")
                                        .arg(QString::fromStdString(error.what())));
        }
    }
    refreshPrediction();
}

void TrainArea::startProbe() {
    measure_->setEnabled(false);
    const RunSettings settings = settings_->settings();
    prediction_->setText(tr("Measuring %1 for a few seconds…").arg(settings.backend));
    // The network the run trains, so that the probe's report is of this network and unscaled.
    runningProbeKey_ = probeKey(trainedNetwork(), settings);
    probe_->start(trainedNetwork(), settings);
}

void TrainArea::setNetwork(const NetworkSpec& spec) {
    network_ = spec;
    refreshFit();
}

void TrainArea::refreshFit() {
    DatasetPicker* data = settings_->datasetPicker();
    fit_ = fitNetworkToData(network_, data->datasetSpec(), data->preview()->summary());
    fit_.memoryRefusal = batchMemoryRefusal(fit_, settings_->settings(), settings_->hardwarePicker()->hardware(),
                                            availableHostMemoryBytes());
    fitNotice_->showFit(fit_, QString::fromStdString(network_.name));
    refreshPrediction();
    emit networkFitChanged();
}

void TrainArea::killAfterAsking() {
    if (!session_->isRunning()) return;
    const auto answer = QMessageBox::question(
        this, tr("Kill the worker"),
        tr("End the training process now? Progress since its last checkpoint is lost; Stop keeps it."));
    if (answer == QMessageBox::Yes) session_->kill();
}

void TrainArea::refreshRunControls() {
    const bool running = session_->isRunning();
    const bool stopping = session_->controller()->state() == TrainingController::State::Stopping;
    train_->setEnabled(!running);
    dashboard_->setRunning(running, stopping);
}

}  // namespace cnnstudio::ui
