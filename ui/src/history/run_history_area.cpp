#include "cnnstudio/ui/history/run_history_area.h"

#include <QMessageBox>
#include <QSplitter>
#include <QVBoxLayout>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_run.h"

namespace cnnstudio::ui {

RunHistoryArea::RunHistoryArea(QWidget* parent)
    : QWidget(parent), openedRun_(new TrainingRun(this)), comparisonRun_(new TrainingRun(this)) {
    panel_ = new RunHistoryPanel(this);
    panel_->setObjectName("runHistory");
    dashboard_ = new TrainingDashboard(this);
    dashboard_->setObjectName("historyDashboard");
    dashboard_->setRun(openedRun_);
    auto* columns = new QSplitter(Qt::Horizontal, this);
    columns->addWidget(panel_);
    columns->addWidget(dashboard_);
    columns->setStretchFactor(0, 2);
    columns->setStretchFactor(1, 3);
    columns->setSizes({640, 800});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(columns);

    connect(panel_, &RunHistoryPanel::openRequested, this, [this](const QString& directory) { openRun(directory); });
    connect(panel_, &RunHistoryPanel::compareRequested, this, &RunHistoryArea::compareRuns);
}

RunHistoryArea::~RunHistoryArea() {
    // The dashboard observes the runs: it goes first, while they still exist.
    delete dashboard_;
}

bool RunHistoryArea::openRun(const QString& runDirectory, bool quiet) {
    try {
        const int skipped = openedRun_->loadEventsFile(runDirectory);
        dashboard_->setComparison(nullptr);
        if (skipped > 0)
            emit message(tr("%n line(s) of the event log could not be read and were skipped", nullptr, skipped));
    } catch (const Error& error) {
        if (!quiet) QMessageBox::warning(this, tr("Open run"), QString::fromStdString(error.what()));
        return false;
    }
    panel_->selectRun(runDirectory);
    return true;
}

void RunHistoryArea::compareRuns(const QString& first, const QString& second) {
    try {
        openedRun_->loadEventsFile(first);
        comparisonRun_->loadEventsFile(second);
        dashboard_->setComparison(comparisonRun_);
    } catch (const Error& error) {
        QMessageBox::warning(this, tr("Compare runs"), QString::fromStdString(error.what()));
    }
}

}  // namespace cnnstudio::ui
