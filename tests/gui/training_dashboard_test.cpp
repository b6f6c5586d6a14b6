// The training dashboard fed a recorded run (tests/gui/data/runs/*/events.jsonl): the curves hold
// the recorded points, the confusion matrix the recorded cells; replots are throttled; a second run
// overlays; plots and metrics export.
#include <QCheckBox>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/confusion_matrix_plot.h"
#include "cnnstudio/ui/training_dashboard.h"
#include "cnnstudio/ui/training_run.h"
#include "gui_tests.h"

using cnnstudio::ui::TrainingDashboard;
using cnnstudio::ui::TrainingRun;
using Curve = cnnstudio::ui::TrainingDashboard::Curve;

namespace {

const QString ferCnnRun = "runs/20261130-101500-fer-cnn";  // 5 epochs x 100 steps, a step event every 25
const QString lenetRun = "runs/20261130-093000-lenet5";    // stopped after 3 of 4 epochs

QJsonObject stepEvent(qint64 step, double loss) {
    return {{"schema", 1}, {"event", "step"}, {"epoch", 1}, {"step", step}, {"epoch_step", step},
            {"loss", loss}, {"learning_rate", 0.001}, {"images_per_s", 1000.0}, {"elapsed_s", step * 0.1}};
}

}  // namespace

class TrainingDashboardTest : public QObject {
    Q_OBJECT

private slots:
    void replayedRunShowsTheRecordedCurvePoints() {
        TrainingRun run;
        QCOMPARE(run.loadEventsFile(cnnstudio::ui::tests::testDataPath(ferCnnRun)), 0);
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        dashboard.refreshNow();

        QCPGraph* steps = dashboard.curve(Curve::StepLoss);
        QCOMPARE(steps->data()->size(), 20);
        // First step event: epoch 1, epoch_step 25 of 100 -> x = 0.25, loss 1.806.
        QCOMPARE(steps->data()->at(0)->key, 0.25);
        QCOMPARE(steps->data()->at(0)->value, 1.806);
        QCOMPARE(steps->data()->at(19)->key, 5.0);
        QCOMPARE(steps->data()->at(19)->value, 0.2936);

        QCPGraph* trainLoss = dashboard.curve(Curve::EpochTrainLoss);
        QCOMPARE(trainLoss->data()->size(), 5);
        QCOMPARE(trainLoss->data()->at(0)->key, 1.0);
        QCOMPARE(trainLoss->data()->at(0)->value, 1.0301);
        QCOMPARE(dashboard.curve(Curve::EpochValidationLoss)->data()->at(4)->value, 0.3835);
        QCPGraph* validationAccuracy = dashboard.curve(Curve::EpochValidationAccuracy);
        QCOMPARE(validationAccuracy->data()->size(), 5);
        QCOMPARE(validationAccuracy->data()->at(0)->value, 69.5);  // percent
        QCOMPARE(validationAccuracy->data()->at(4)->value, 88.67);
        QCOMPARE(dashboard.curve(Curve::EpochTrainAccuracy)->data()->at(1)->value, 76.7);

        QVERIFY2(dashboard.statusText().contains("Finished"), qPrintable(dashboard.statusText()));
        QCOMPARE(run.bestValidationAccuracy().value(), 0.8867);
        QCOMPARE(run.testAccuracy().value(), 0.8807);
    }

    void replayedRunShowsTheLastConfusionMatrix() {
        TrainingRun run;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(ferCnnRun));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        cnnstudio::ui::ConfusionMatrixPlot* matrix = dashboard.confusionMatrix();
        QCOMPARE(matrix->classCount(), 10);
        QCOMPARE(matrix->className(6), QString("Shirt"));
        // Epoch 5, true Shirt: [8, 0, 7, 0, 7, 0, 38, 0, 0, 0]
        QCOMPARE(matrix->count(6, 0), qint64(8));
        QCOMPARE(matrix->count(6, 6), qint64(38));
        QCOMPARE(matrix->count(0, 0), qint64(52));
        QCOMPARE(matrix->cellText(6, 6), QString("38"));

        auto* toggle = dashboard.findChild<QCheckBox*>("normalisedToggle");
        QVERIFY(toggle);
        toggle->setChecked(true);
        QVERIFY(matrix->isNormalised());
        QCOMPARE(matrix->value(6, 6), 38.0 / 60.0);
        QCOMPARE(matrix->cellText(6, 6), QString("63%"));
    }

    void replotsAreThrottledToTenASecond() {
        TrainingRun run;
        run.addEvent({{"schema", 1}, {"event", "run_started"}, {"epochs", 1}, {"steps_per_epoch", 100000}});
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        dashboard.resize(900, 600);
        dashboard.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
        QTest::qWait(50);
        int replots = 0;
        connect(dashboard.lossPlot(), &QCustomPlot::afterReplot, this, [&] { ++replots; });

        QElapsedTimer clock;
        clock.start();
        qint64 step = 0;
        while (clock.elapsed() < 1000) {  // an event every millisecond or so, for a second
            ++step;
            run.addEvent(stepEvent(step, 2.0 / double(step)));
            QCoreApplication::processEvents();
            QTest::qSleep(1);
        }
        QTest::qWait(250);  // the last scheduled redraw
        QVERIFY2(replots >= 5 && replots <= 14, qPrintable(QString("%1 replots in one second").arg(replots)));
        QCOMPARE(dashboard.curve(Curve::StepLoss)->data()->size(), int(step));
    }

    void aSecondRunIsOverlaid() {
        TrainingRun run, other;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(ferCnnRun));
        other.loadEventsFile(cnnstudio::ui::tests::testDataPath(lenetRun));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        QVERIFY(!dashboard.comparisonCurve(Curve::EpochValidationAccuracy)->visible());
        dashboard.setComparison(&other);
        QCPGraph* overlay = dashboard.comparisonCurve(Curve::EpochValidationAccuracy);
        QVERIFY(overlay->visible());
        QCOMPARE(overlay->data()->size(), 3);
        QCOMPARE(overlay->data()->at(2)->value, 65.67);
        QCOMPARE(overlay->pen().style(), Qt::DashLine);
        auto* note = dashboard.findChild<QLabel*>("comparisonNote");
        QVERIFY(note && note->text().contains("20261130-093000-lenet5"));
        dashboard.setComparison(nullptr);
        QVERIFY(!overlay->visible());
    }

    void aStoppedRunSaysItCanBeResumed() {
        TrainingRun run;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(lenetRun));
        QCOMPARE(run.state(), TrainingRun::State::Finished);
        QCOMPARE(run.finishedEvent().value("reason").toString(), QString("stopped"));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        QVERIFY2(dashboard.statusText().contains("resume"), qPrintable(dashboard.statusText()));
    }

    void aTruncatedLastLineIsSkippedAndCounted() {
        QTemporaryDir folder;
        QFile source(cnnstudio::ui::tests::testDataPath(ferCnnRun + "/events.jsonl"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QByteArray text = source.readAll();
        const qsizetype lastLine = text.lastIndexOf('\n', text.size() - 2);
        text.truncate(lastLine + 30);  // the worker died while writing `finished`
        QFile copy(folder.filePath("events.jsonl"));
        QVERIFY(copy.open(QIODevice::WriteOnly));
        copy.write(text);
        copy.close();
        TrainingRun run;
        QCOMPARE(run.loadEventsFile(folder.path()), 1);
        QCOMPARE(run.epochs().size(), qsizetype(5));
        QCOMPARE(run.state(), TrainingRun::State::Running);  // it never said it finished
        QCOMPARE(run.runDirectory(), folder.path());
    }

    void eventsOfAnotherSchemaAreSkipped() {
        TrainingRun run;
        QJsonObject future = stepEvent(1, 1.0);
        future["schema"] = 2;
        run.addEvent(future);
        run.addEvent(QJsonObject{{"schema", 1}, {"event", "something_new"}});
        QVERIFY(run.steps().isEmpty());
        run.addEvent(stepEvent(1, 1.0));
        QCOMPARE(run.steps().size(), qsizetype(1));
    }

    void failureShowsTheReasonAndStandardErrorTail() {
        TrainingDashboard dashboard;
        dashboard.showFailure("loss became NaN at epoch 2 step 130", "line one\nline two");
        auto* reason = dashboard.findChild<QLabel*>("failureReason");
        auto* log = dashboard.findChild<QPlainTextEdit*>("failureLog");
        QVERIFY(reason && log);
        QVERIFY(reason->text().contains("loss became NaN"));
        QCOMPARE(log->toPlainText(), QString("line one\nline two"));
        dashboard.showFailure({}, {});
        QVERIFY(reason->text().isEmpty());
    }

    void plotsAndMetricsExport() {
        QTemporaryDir folder;
        TrainingRun run;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(ferCnnRun));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        dashboard.exportPlots(folder.filePath("fer.png"));
        QVERIFY(!QImage(folder.filePath("fer-loss.png")).isNull());
        QVERIFY(!QImage(folder.filePath("fer-accuracy.png")).isNull());
        dashboard.exportPlots(folder.filePath("fer.pdf"));
        QFile pdf(folder.filePath("fer-loss.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");

        dashboard.exportMetricsCsv(folder.filePath("metrics.csv"));
        QFile csv(folder.filePath("metrics.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 6);
        QVERIFY(lines[0].startsWith("epoch,step,train_loss,train_accuracy,validation_loss,validation_accuracy"));
        QVERIFY2(lines[1].startsWith("1,100,1.0301,0.717,1.0794,0.695,"), qPrintable(lines[1]));
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, dashboard.exportMetricsCsv("/nonexistent/folder/m.csv"));
    }
};

CNNSTUDIO_GUI_TEST(TrainingDashboardTest);

#include "training_dashboard_test.moc"
