// The run history over tests/gui/data/runs: each run folder's config and final metrics, newest
// first; the panel enables Compare for two runs and Resume only for resumable ones.
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include "cnnstudio/ui/run_catalogue.h"
#include "cnnstudio/ui/run_history_panel.h"
#include "gui_tests.h"

using cnnstudio::ui::RunRecord;

class RunHistoryTest : public QObject {
    Q_OBJECT

private slots:
    void scanFindsEveryRunWithItsFinalMetrics() {
        const QList<RunRecord> records = cnnstudio::ui::scanRunsFolder(cnnstudio::ui::tests::testDataPath("runs"));
        QCOMPARE(records.size(), qsizetype(2));
        const RunRecord& newest = records[0];
        QCOMPARE(newest.name, QString("20261130-101500-fer-cnn"));
        QCOMPARE(newest.model, QString("fer-cnn"));
        QCOMPARE(newest.dataset, QString("fashion-mnist"));
        QCOMPARE(newest.backend, QString("cpu"));
        QCOMPARE(newest.status, QString("completed"));
        QCOMPARE(newest.epochsRun, 5);
        QCOMPARE(newest.epochsPlanned, 5);
        QCOMPARE(newest.bestValidationAccuracy.value(), 0.8867);
        QCOMPARE(newest.testAccuracy.value(), 0.8807);
        QCOMPARE(newest.config.value("optimizer").toString(), QString("adam"));
        QVERIFY(!newest.resumable);
        QVERIFY2(newest.problem.isEmpty(), qPrintable(newest.problem));

        const RunRecord& stopped = records[1];
        QCOMPARE(stopped.status, QString("stopped"));
        QCOMPARE(stopped.epochsRun, 3);
        QCOMPARE(stopped.epochsPlanned, 4);
        QVERIFY(!stopped.testAccuracy);
        QVERIFY2(!stopped.resumable, "no checkpoints/latest in the fixture: nothing to resume from");
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
