// The run history over tests/gui/data/runs (recorded by cnnstudio-train): each run folder's config and final metrics, newest
// first; the panel enables Compare for two runs and Resume only for resumable ones.
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include "cnnstudio/ui/history/run_catalogue.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#include "gui_tests.h"

using cnnstudio::ui::RunRecord;

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
        QVERIFY(QDir().mkpath(run + "/checkpoints/latest"));
        for (const char* file : {"events.jsonl", "config.json"})
            QVERIFY(QFile::copy(cnnstudio::ui::tests::testDataPath(QString("runs/20261130-014251-lenet5-sgd/") + file),
                                run + "/" + file));
        QVERIFY(cnnstudio::ui::readRunRecord(run).resumable);
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

    void panelListsRunsAndEnablesCompareForTwo() {
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
    }
};

CNNSTUDIO_GUI_TEST(RunHistoryTest);

#include "run_history_test.moc"
