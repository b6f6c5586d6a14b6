// RunHistoryPanel: the runs under the runs folder (settable), newest first, with their data set,
// backend, epochs and final metrics, and the selected run's configuration. From here, with the
// buttons or a run's right-click menu, a run is reopened (its plots replayed), any number of runs
// are compared (curves overlaid), a stopped run is resumed, a trained one classifies an image,
// a run's folder is shown or deleted. The
// folder is scanned off the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QList>
#include <QWidget>

#include "cnnstudio/ui/history/run_catalogue.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;

namespace cnnstudio::ui {

class RunHistoryPanel : public QWidget {
    Q_OBJECT

public:
    explicit RunHistoryPanel(QWidget* parent = nullptr);
    ~RunHistoryPanel() override;

    QString runsRoot() const;
    void setRunsRoot(const QString& root);  // and rescans
    const QList<RunRecord>& records() const { return records_; }
    bool isScanning() const { return scanner_.isRunning(); }
    QStringList selectedRunDirectories() const;
    void selectRun(const QString& directory);
    void selectRuns(const QStringList& directories);
    // The run being trained now, if any: listed as training, neither resumed nor deleted from here.
    void setTrainingRun(const QString& directory);

public slots:
    void refresh();

signals:
    void runsRootChanged(const QString& root);
    void scanned();
    void openRequested(const QString& runDirectory);
    void compareRequested(const QStringList& runDirectories);  // two or more
    void resumeRequested(const QString& runDirectory);
    void classifyRequested(const QString& runDirectory);  // an image, with this run's model

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;  // the run list's resizes

private:
    void showRecords();
    void fitRunColumn();
    void updateSelection();
    void browse();
    void showRunMenu(const QPoint& position);
    void deleteSelectedAfterAsking();
    void revealSelected();
    bool isTraining(const QString& directory) const;

    QLineEdit* root_;
    QLabel* summary_;
    QTreeWidget* runs_;
    QObject* runsViewport_;  // whose resizes fit the Run column (compared, never called: it may be going)
    QTreeWidget* details_;
    QPushButton* open_;
    QPushButton* compare_;
    QPushButton* resume_;
    QPushButton* reveal_;
    QString trainingRun_;
    QList<RunRecord> records_;
    QFutureWatcher<QList<RunRecord>> scanner_;
    bool rescanPending_ = false;
};

}  // namespace cnnstudio::ui
