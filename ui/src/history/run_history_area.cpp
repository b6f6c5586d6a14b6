#include "cnnstudio/ui/history/run_history_area.h"

#include <QDir>
#include <QMessageBox>
#include <QSplitter>
#include <QVBoxLayout>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_run.h"

namespace cnnstudio::ui {

RunHistoryArea::RunHistoryArea(QWidget* parent) : QWidget(parent), openedRun_(new TrainingRun(this)) {
    panel_ = new RunHistoryPanel(this);
    panel_->setObjectName("runHistory");
    panel_->setMinimumWidth(320);
    dashboard_ = new TrainingDashboard(this);
    dashboard_->setObjectName("historyDashboard");
    dashboard_->setEmptyText(tr("No run opened: double-click a run in the list (or select it and press Open); "
                                "select two or more and press Compare to overlay their curves."));
    dashboard_->setRun(openedRun_);
    auto* columns = new QSplitter(Qt::Horizontal, this);
    columns->addWidget(panel_);
    columns->addWidget(dashboard_);
    // The list needs about 550 pixels for all its columns; the curves take the rest.
    columns->setStretchFactor(0, 1);
    columns->setStretchFactor(1, 2);
    columns->setSizes({560, 1000});
    columns->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(columns);

    connect(panel_, &RunHistoryPanel::openRequested, this, [this](const QString& directory) { openRun(directory); });
    connect(panel_, &RunHistoryPanel::compareRequested, this, &RunHistoryArea::compareRuns);
    connect(dashboard_, &TrainingDashboard::message, this, &RunHistoryArea::message);
}

RunHistoryArea::~RunHistoryArea() {
    // The dashboard observes the runs: it goes first, while they still exist.
    delete dashboard_;
}

bool RunHistoryArea::openRun(const QString& runDirectory, bool quiet) {
    try {
        const int skipped = openedRun_->loadEventsFile(runDirectory);
        clearComparisons();
        if (skipped > 0)
            emit message(tr("%n line(s) of the event log could not be read and were skipped", nullptr, skipped));
    } catch (const Error& error) {
        if (!quiet) QMessageBox::warning(this, tr("Open run"), QString::fromStdString(error.what()));
        return false;
    }
    panel_->selectRun(runDirectory);
    return true;
}

void RunHistoryArea::compareRuns(const QStringList& runDirectories) {
    if (runDirectories.isEmpty()) return;
    QList<TrainingRun*> compared;
    try {
        openedRun_->loadEventsFile(runDirectories.first());
        for (const QString& directory : runDirectories.mid(1)) {
            auto* run = new TrainingRun(this);
            compared << run;
            run->loadEventsFile(directory);
        }
    } catch (const Error& error) {
        qDeleteAll(compared);
        QMessageBox::warning(this, tr("Compare runs"), QString::fromStdString(error.what()));
        return;
    }
    clearComparisons();
    comparedRuns_ = compared;
    dashboard_->setComparisons(comparedRuns_);
}

QStringList RunHistoryArea::shownRuns() const {
    QStringList directories;
    if (!openedRun_->runDirectory().isEmpty()) directories << openedRun_->runDirectory();
    for (const TrainingRun* run : comparedRuns_) directories << run->runDirectory();
    return directories;
}

void RunHistoryArea::runChanged(const QString& runDirectory, bool training) {
    panel_->setTrainingRun(training ? runDirectory : QString());
    panel_->refresh();
    const QString changed = QDir(runDirectory).absolutePath();
    // The events on disk are complete up to now: a replay of this run reads them again.
    for (TrainingRun* run : QList<TrainingRun*>{openedRun_} + comparedRuns_) {
        if (run->runDirectory().isEmpty() || QDir(run->runDirectory()).absolutePath() != changed) continue;
        try {
            run->loadEventsFile(runDirectory);
        } catch (const Error& error) {
            emit message(tr("Could not read %1 again: %2").arg(runDirectory, QString::fromStdString(error.what())));
        }
    }
}

void RunHistoryArea::clearComparisons() {
    dashboard_->setComparisons({});
    qDeleteAll(comparedRuns_);
    comparedRuns_.clear();
}

}  // namespace cnnstudio::ui
