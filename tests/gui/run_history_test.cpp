// The run history over tests/gui/data/runs (recorded by cnnstudio-train): each run folder's config and final metrics, newest
// first; the panel enables Compare for two or more runs and Resume only for resumable ones; any
// number of runs compare in distinct colours; a resumed run is shown as it is now, not as it was.
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <qcustomplot.h>

#include "cnnstudio/safetensors.h"
#include "cnnstudio/ui/history/image_classifier.h"
#include "cnnstudio/ui/history/run_catalogue.h"
#include "cnnstudio/ui/history/run_history_area.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#include "cnnstudio/ui/main_window.h"
#include "cnnstudio/ui/training/confusion_matrix_plot.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_session.h"
#include "gui_tests.h"

using cnnstudio::ui::RunRecord;
using Curve = cnnstudio::ui::TrainingDashboard::Curve;

namespace {

// A copy of a recorded run (its events and config) under root, named `name` (default: as recorded).
QString copyRun(const QTemporaryDir& root, const QString& recorded, const QString& name = {}) {
    const QString run = root.filePath(name.isEmpty() ? recorded : name);
    if (!QDir().mkpath(run)) return {};
    for (const char* file : {"events.jsonl", "config.json"})
        if (!QFile::copy(cnnstudio::ui::tests::testDataPath("runs/" + recorded + "/" + file), run + "/" + file))
            return {};
    return run;
}

}  // namespace

class RunHistoryTest : public QObject {
    Q_OBJECT

private slots:
    void scanFindsEveryRunWithItsFinalMetrics() {
        const QList<RunRecord> records = cnnstudio::ui::scanRunsFolder(cnnstudio::ui::tests::testDataPath("runs"));
        QCOMPARE(records.size(), qsizetype(2));
        const RunRecord& stopped = records[0];  // newest first
        QCOMPARE(stopped.name, QString("20261130-014251-lenet5-sgd"));
        QCOMPARE(stopped.model, QString("lenet5"));
        QCOMPARE(stopped.dataset, QString("fashion-mnist"));
        QCOMPARE(stopped.backend, QString("cpu-ref"));
        QCOMPARE(stopped.status, QString("stopped"));
        QCOMPARE(stopped.epochsRun, 3);
        QCOMPARE(stopped.epochsPlanned, 6);
        QCOMPARE(stopped.bestValidationAccuracy.value(), 0.7541666666666667);
        QVERIFY(!stopped.testAccuracy);
        QVERIFY2(!stopped.resumable, "the fixture leaves out checkpoints/: nothing to resume from");
        QVERIFY2(stopped.problem.isEmpty(), qPrintable(stopped.problem));

        const RunRecord& completed = records[1];
        QCOMPARE(completed.status, QString("completed"));
        QCOMPARE(completed.backend, QString("cpu"));
        QCOMPARE(completed.epochsRun, 4);
        QCOMPARE(completed.epochsPlanned, 4);
        QCOMPARE(completed.testAccuracy.value(), 0.7783);
        QCOMPARE(completed.config.value("trainer").toObject().value("optimizer").toObject().value("kind").toString(),
                 QString("adam"));
        QVERIFY(!completed.resumable);
    }

    void aStoppedRunWithACheckpointCanBeResumed() {
        QTemporaryDir root;
        const QString run = root.filePath("20261130-014251-lenet5-sgd");
        QVERIFY(cnnstudio::ui::tests::writeCheckpoint(run + "/checkpoints/latest"));
        for (const char* file : {"events.jsonl", "config.json"})
            QVERIFY(QFile::copy(cnnstudio::ui::tests::testDataPath(QString("runs/20261130-014251-lenet5-sgd/") + file),
                                run + "/" + file));
        QVERIFY(cnnstudio::ui::readRunRecord(run).resumable);
    }

    // A truncated event log, a missing config and a checkpoint with a flipped byte: each run is
    // listed as damaged, with the reason, and cannot be resumed.
    void damagedRunFoldersShowAsDamagedWithTheReason() {
        QTemporaryDir root;
        const QString recorded = "20261130-014251-lenet5-sgd";
        const QString truncated = copyRun(root, recorded, "truncated");
        QFile events(truncated + "/events.jsonl");
        QVERIFY(events.open(QIODevice::Append));
        events.write("{\"schema\": 1, \"event\": \"ep");
        events.close();

        const QString withoutConfig = copyRun(root, recorded, "without-config");
        QVERIFY(QFile::remove(withoutConfig + "/config.json"));

        const QString corrupt = copyRun(root, recorded, "corrupt-checkpoint");
        const QString weights = corrupt + "/checkpoints/latest/weights.safetensors";
        QVERIFY(cnnstudio::ui::tests::writeCheckpoint(corrupt + "/checkpoints/latest"));
        QFile file(weights);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QByteArray bytes = file.readAll();
        bytes[bytes.size() - 1] = char(bytes[bytes.size() - 1] ^ 0x01);
        QVERIFY(file.seek(0));
        QCOMPARE(file.write(bytes), bytes.size());
        file.close();

        const QList<QPair<QString, QString>> expected = {
            {truncated, "1 line(s) of events.jsonl could not be read"},
            {withoutConfig, "config.json is missing"},
            {corrupt, "the latest checkpoint is unreadable: " + weights + ": tensor 'conv.weight''s data has CRC32"}};
        for (const auto& [folder, reason] : expected) {
            const RunRecord record = cnnstudio::ui::readRunRecord(folder);
            QCOMPARE(record.status, QString("damaged"));
            QVERIFY(record.damaged);
            QVERIFY2(record.problem.contains(reason), qPrintable(record.problem));
            QVERIFY(!record.resumable);
        }
        QCOMPARE(cnnstudio::ui::readRunRecord(copyRun(root, recorded, "intact")).status, QString("stopped"));
    }

    void aFolderWithoutEventsSaysSo() {
        QTemporaryDir root;
        QDir(root.path()).mkpath("empty-run");
        QFile config(root.filePath("empty-run/config.json"));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write("{\"epochs\": 3, \"backend\": \"cpu\"}");
        config.close();
        const QList<RunRecord> records = cnnstudio::ui::scanRunsFolder(root.path());
        QCOMPARE(records.size(), qsizetype(1));
        QCOMPARE(records[0].epochsPlanned, 3);
        QCOMPARE(records[0].backend, QString("cpu"));
        QVERIFY2(records[0].problem.contains("events.jsonl"), qPrintable(records[0].problem));
    }

    void panelListsRunsAndEnablesCompareForTwoOrMore() {
        cnnstudio::ui::RunHistoryPanel panel;
        QSignalSpy scanned(&panel, &cnnstudio::ui::RunHistoryPanel::scanned);
        panel.setRunsRoot(cnnstudio::ui::tests::testDataPath("runs"));
        QVERIFY(scanned.wait(20000) || !panel.isScanning());
        QTRY_COMPARE(panel.records().size(), qsizetype(2));
        auto* list = panel.findChild<QTreeWidget*>("runList");
        QVERIFY(list);
        QCOMPARE(list->topLevelItemCount(), 2);

        QPushButton* compare = nullptr;
        QPushButton* resume = nullptr;
        for (QPushButton* button : panel.findChildren<QPushButton*>()) {
            if (button->text() == "Compare") compare = button;
            if (button->text() == "Resume") resume = button;
        }
        QVERIFY(compare && resume);
        panel.selectRun(panel.records()[0].directory);
        QVERIFY(!compare->isEnabled());
        QVERIFY(!resume->isEnabled());
        list->topLevelItem(1)->setSelected(true);
        QCOMPARE(panel.selectedRunDirectories().size(), qsizetype(2));
        QVERIFY(compare->isEnabled());
        QSignalSpy compared(&panel, &cnnstudio::ui::RunHistoryPanel::compareRequested);
        compare->click();
        QCOMPARE(compared.count(), 1);
        QCOMPARE(compared.at(0).at(0).toStringList().size(), qsizetype(2));
    }

    // Audit item 19: in a narrow list (Run history at 1024x700) the columns that say how each run
    // went show without scrolling; the Run column gives way.
    void aNarrowListShowsHowEachRunWentWithoutScrolling() {
        cnnstudio::ui::RunHistoryPanel panel;
        QSignalSpy scanned(&panel, &cnnstudio::ui::RunHistoryPanel::scanned);
        panel.resize(365, 500);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setRunsRoot(cnnstudio::ui::tests::testDataPath("runs"));
        QTRY_VERIFY_WITH_TIMEOUT(!scanned.isEmpty(), 20000);
        auto* list = panel.findChild<QTreeWidget*>("runList");
        const int epochsColumn = 4;
        QCOMPARE(list->headerItem()->text(epochsColumn), QString("Epochs"));
        QTRY_VERIFY_WITH_TIMEOUT(list->header()->sectionViewportPosition(epochsColumn) +
                                         list->header()->sectionSize(epochsColumn) <=
                                     list->viewport()->width(),
                                 2000);
        QVERIFY(list->header()->sectionSize(0) >= 110);
        panel.resize(1000, 500);  // room enough: the run's folder name whole
        QTRY_COMPARE_WITH_TIMEOUT(list->header()->sectionSize(0), 200, 2000);
        QCOMPARE(panel.findChild<QLineEdit*>("runsRoot")->toolTip(), cnnstudio::ui::tests::testDataPath("runs"));
    }

    void compareOfThreeRunsShowsThreeDistinctSeries() {
        QTemporaryDir root;
        const QStringList runs = {copyRun(root, "20261130-014119-lenet5-adam"), copyRun(root, "20261130-014251-lenet5-sgd"),
                                  copyRun(root, "20261130-014119-lenet5-adam", "20261130-020000-lenet5-adam-again")};
        for (const QString& run : runs) QVERIFY(!run.isEmpty());
        cnnstudio::ui::RunHistoryArea area;
        QSignalSpy scanned(area.panel(), &cnnstudio::ui::RunHistoryPanel::scanned);
        area.panel()->setRunsRoot(root.path());
        QTRY_COMPARE_WITH_TIMEOUT(area.panel()->records().size(), qsizetype(3), 20000);
        area.panel()->selectRuns(runs);
        QSignalSpy compared(area.panel(), &cnnstudio::ui::RunHistoryPanel::compareRequested);
        QPushButton* compare = nullptr;
        for (QPushButton* button : area.panel()->findChildren<QPushButton*>())
            if (button->text().startsWith("Compare")) compare = button;
        QVERIFY(compare && compare->isEnabled());
        compare->click();
        QCOMPARE(compared.count(), 1);

        cnnstudio::ui::TrainingDashboard* dashboard = area.dashboard();
        QCOMPARE(dashboard->comparisonCount(), 2);
        QCOMPARE(area.shownRuns().size(), qsizetype(3));
        QList<QCPGraph*> series = {dashboard->curve(Curve::EpochValidationAccuracy)};
        for (int i = 0; i < dashboard->comparisonCount(); ++i)
            series << dashboard->comparisonCurve(i, Curve::EpochValidationAccuracy);
        QSet<QRgb> colours;
        for (QCPGraph* graph : series) {
            QVERIFY(graph->visible());
            QVERIFY(graph->data()->size() >= 3);
            colours.insert(graph->pen().color().rgb());
        }
        QCOMPARE(colours.size(), qsizetype(3));
        int legendEntries = 0;  // one per run; a wrapped legend counts its empty cells as items too
        for (int i = 0; i < dashboard->accuracyPlot()->legend->itemCount(); ++i)
            legendEntries += dashboard->accuracyPlot()->legend->item(i) != nullptr;
        QCOMPARE(legendEntries, 3);
    }

    // Audit item 20: with runs listed and none opened, the dashboard says how to open one, not
    // "No run yet: design a network…" as the Train page does.
    void withNoRunOpenedTheDashboardSaysHowToOpenOne() {
        cnnstudio::ui::RunHistoryArea area;
        const QString status = area.dashboard()->statusText();
        QVERIFY2(!status.contains("No run yet") && status.contains("double-click"), qPrintable(status));
    }

    // Audit item 6: in compare mode the header, progress bar and confusion matrix of the first run
    // do not pose as the comparison's; opening one run again brings them back.
    void compareModeShowsNoSingleRunHeaderProgressOrMatrix() {
        QTemporaryDir root;
        const QString stopped = copyRun(root, "20261130-014251-lenet5-sgd");
        const QString completed = copyRun(root, "20261130-014119-lenet5-adam");
        QVERIFY(!stopped.isEmpty() && !completed.isEmpty());
        cnnstudio::ui::RunHistoryArea area;
        cnnstudio::ui::TrainingDashboard* dashboard = area.dashboard();
        auto* progress = dashboard->findChild<QWidget*>("runProgress");
        auto* comparisonNote = dashboard->findChild<QLabel*>("comparisonNote");
        QVERIFY(progress && comparisonNote);

        area.compareRuns({stopped, completed});
        QCOMPARE(dashboard->statusText(), QString("Comparing 2 runs"));
        QVERIFY(progress->isHidden());
        QVERIFY(!dashboard->confusionMatrix()->isVisibleTo(dashboard));
        QVERIFY2(comparisonNote->text().count("best validation") == 2, qPrintable(comparisonNote->text()));

        QVERIFY(area.openRun(completed));
        QVERIFY2(dashboard->statusText().startsWith("Finished"), qPrintable(dashboard->statusText()));
        QVERIFY(!progress->isHidden());
        QVERIFY(dashboard->confusionMatrix()->isVisibleTo(dashboard));
    }

    // Resume a stopped run from Run history: when the resumed session completes, the list and the
    // opened replay say "completed", not "stopped".
    void aResumedRunIsShownAsItIsNow() {
        QTemporaryDir root;
        const QString run = copyRun(root, "20261130-014251-lenet5-sgd");
        QVERIFY(cnnstudio::ui::tests::writeCheckpoint(run + "/checkpoints/latest"));
        QTemporaryDir workerFolder;
        const QString worker = workerFolder.filePath("fake-worker");
        QVERIFY(QFile::copy(cnnstudio::ui::tests::testDataPath("fake-workers/resume-completes.sh"), worker));
        QFile(worker).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);

        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = root.path();
        cnnstudio::ui::MainWindow window(options);
        window.trainingSession()->controller()->setWorkerProgram(worker);
        cnnstudio::ui::RunHistoryArea* history = window.historyArea();
        QTRY_COMPARE_WITH_TIMEOUT(history->panel()->records().size(), qsizetype(1), 20000);
        QCOMPARE(history->panel()->records()[0].status, QString("stopped"));
        QVERIFY(window.openRunInHistory(run));
        QVERIFY2(history->dashboard()->statusText().startsWith("Stopped"), qPrintable(history->dashboard()->statusText()));

        QSignalSpy ended(window.trainingSession(), &cnnstudio::ui::TrainingSession::runEnded);
        emit history->panel()->resumeRequested(run);
        QVERIFY(ended.wait(20000));
        QTRY_COMPARE_WITH_TIMEOUT(history->panel()->records()[0].status, QString("completed"), 20000);
        history->dashboard()->refreshNow();
        QVERIFY2(history->dashboard()->statusText().startsWith("Finished"), qPrintable(history->dashboard()->statusText()));
        auto* list = history->panel()->findChild<QTreeWidget*>("runList");
        int status = 0;
        while (status < list->columnCount() && list->headerItem()->text(status) != "Status") ++status;
        QCOMPARE(list->topLevelItem(0)->text(status), QString("completed"));
    }

    void predictOutputGivesTheTopClasses() {
        const QList<cnnstudio::ui::ClassScore> scores = cnnstudio::ui::parsePredictOutput(
            "/images/boot.png\n  Ankle boot        91.20%\n  Sneaker            5.10%\n/images/other.png\n  Bag 1.00%\n");
        QCOMPARE(scores.size(), qsizetype(2));
        QCOMPARE(scores[0].className, QString("Ankle boot"));
        QCOMPARE(scores[0].probability, 0.912);
        QCOMPARE(scores[1].className, QString("Sneaker"));
    }

    // The classifier runs the worker's predict on the run's model, off the GUI thread.
    void anImageIsClassifiedByTheWorker() {
        QTemporaryDir folder;
        const QString worker = folder.filePath("fake-worker");
        QVERIFY(QFile::copy(cnnstudio::ui::tests::testDataPath("fake-workers/predict-top-classes.sh"), worker));
        QFile(worker).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        cnnstudio::ui::ImageClassifier classifier;
        classifier.setWorkerProgram(worker);
        QSignalSpy classified(&classifier, &cnnstudio::ui::ImageClassifier::classified);
        classifier.classify("/runs/lenet", "/images/boot.png", 3);
        QVERIFY(classified.wait(20000));
        const auto scores = classified.at(0).at(0).value<QList<cnnstudio::ui::ClassScore>>();
        QCOMPARE(scores.size(), qsizetype(3));
        QCOMPARE(scores[0].className, QString("Ankle boot"));
        QFile arguments(folder.filePath("arguments.txt"));
        QVERIFY(arguments.open(QIODevice::ReadOnly | QIODevice::Text));
        QCOMPARE(QString::fromUtf8(arguments.readAll()).split('\n', Qt::SkipEmptyParts),
                 QStringList({"predict", "/runs/lenet", "/images/boot.png", "--top", "3"}));
    }
};

CNNSTUDIO_GUI_TEST(RunHistoryTest);

#include "run_history_test.moc"
