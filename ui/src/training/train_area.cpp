#include "cnnstudio/ui/training/train_area.h"

#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "cnnstudio/ui/training/dataset_picker.h"
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

    auto* left = new QWidget(this);
    left->setMinimumWidth(320);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(settings_, 1);
    leftLayout->addWidget(fitNotice_);
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
    connect(settings_->datasetPicker(), &DatasetPicker::previewUpdated, this, &TrainArea::refreshFit);
    connect(settings_, &RunSettingsPanel::settingsChanged, this, &TrainArea::refreshFit);
    refreshRunControls();
}

void TrainArea::setNetwork(const NetworkSpec& spec) {
    network_ = spec;
    refreshFit();
}

void TrainArea::refreshFit() {
    DatasetPicker* data = settings_->datasetPicker();
    fit_ = fitNetworkToData(network_, data->datasetSpec(), data->preview()->summary());
    fitNotice_->showFit(fit_, QString::fromStdString(network_.name));
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
