// The training dashboard fed runs recorded by cnnstudio-train (tests/gui/data/runs): the curves hold
// the recorded points, the confusion matrix the recorded cells; replots are throttled; a second run
// overlays in its own colour, legends stay outside the plots; plots and metrics export.
#include <QCheckBox>
#include <QFontInfo>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/training/confusion_matrix_plot.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_run.h"
#include "gui_tests.h"

using cnnstudio::ui::TrainingDashboard;
using cnnstudio::ui::TrainingRun;
using Curve = cnnstudio::ui::TrainingDashboard::Curve;

namespace {

// Recorded by cnnstudio-train (see data/README.md).
const QString adamRun = "runs/20261130-014119-lenet5-adam";  // 4 epochs x 50 steps, a step event every 10
const QString sgdRun = "runs/20261130-014251-lenet5-sgd";    // stopped during epoch 4 of 6

cnnstudio::Event stepEvent(qint64 step, double loss) {
    cnnstudio::StepEvent event;
    event.epoch = 1;
    event.step = event.epochStep = step;
    event.loss = loss;
    event.learningRate = 0.001;
    event.imagesPerSecond = 1000.0;
    event.elapsedSeconds = double(step) * 0.1;
    return {{}, event};
}

cnnstudio::Event runStartedEvent(int epochs, qint64 stepsPerEpoch) {
    cnnstudio::RunStartedEvent event;
    event.epochs = epochs;
    event.stepsPerEpoch = stepsPerEpoch;
    return {{}, event};
}

// A line of an event log, of any schema and event name.
QByteArray stepLine(int schema, const char* event, qint64 step) {
    return QStringLiteral(R"({"schema":%1,"event":"%2","epoch":1,"step":%3,"epoch_step":%3,"loss":1.0})")
               .arg(schema)
               .arg(QLatin1String(event))
               .arg(step)
               .toUtf8() +
           '\n';
}

}  // namespace

class TrainingDashboardTest : public QObject {
    Q_OBJECT

private slots:
    void replayedRunShowsTheRecordedCurvePoints() {
        TrainingRun run;
        QCOMPARE(run.loadEventsFile(cnnstudio::ui::tests::testDataPath(adamRun)), 0);
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        dashboard.refreshNow();

        QCPGraph* steps = dashboard.curve(Curve::StepLoss);
        QCOMPARE(steps->data()->size(), 20);
        // First step event: epoch 1, epoch_step 10 of 50 -> x = 0.2.
        QCOMPARE(steps->data()->at(0)->key, 0.2);
        QCOMPARE(steps->data()->at(0)->value, 1.5779938697814941);
        QCOMPARE(steps->data()->at(19)->key, 4.0);
        QCOMPARE(steps->data()->at(19)->value, 0.7180801630020142);

        QCPGraph* trainLoss = dashboard.curve(Curve::EpochTrainLoss);
        QCOMPARE(trainLoss->data()->size(), 4);
        QCOMPARE(trainLoss->data()->at(0)->key, 1.0);
        QCOMPARE(trainLoss->data()->at(0)->value, 1.2533785903453827);
        QCOMPARE(dashboard.curve(Curve::EpochValidationLoss)->data()->at(3)->value, 0.5639802297369216);
        QCPGraph* validationAccuracy = dashboard.curve(Curve::EpochValidationAccuracy);
        QCOMPARE(validationAccuracy->data()->size(), 4);
        QCOMPARE(validationAccuracy->data()->at(0)->value, 74.63333333333333);  // percent
        QCOMPARE(validationAccuracy->data()->at(3)->value, 78.78333333333333);
        QCOMPARE(dashboard.curve(Curve::EpochTrainAccuracy)->data()->at(1)->value, 72.78125);

        QVERIFY2(dashboard.statusText().contains("Finished"), qPrintable(dashboard.statusText()));
        QCOMPARE(run.bestValidationAccuracy().value(), 0.7878333333333334);
        QCOMPARE(run.testAccuracy().value(), 0.7783);
    }

    void replayedRunShowsTheLastConfusionMatrix() {
        TrainingRun run;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(adamRun));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        cnnstudio::ui::ConfusionMatrixPlot* matrix = dashboard.confusionMatrix();
        QCOMPARE(matrix->classCount(), 10);
        QCOMPARE(matrix->className(6), QString("Shirt"));
        // Epoch 4, true Shirt: [123, 2, 146, 24, 91, 0, 166, 0, 13, 0] (565 images)
        QCOMPARE(matrix->count(6, 0), qint64(123));
        QCOMPARE(matrix->count(6, 6), qint64(166));
        QCOMPARE(matrix->count(0, 0), qint64(477));
        QCOMPARE(matrix->cellText(6, 6), QString("166"));

        auto* toggle = dashboard.findChild<QCheckBox*>("normalisedToggle");
        QVERIFY(toggle);
        toggle->setChecked(true);
        QVERIFY(matrix->isNormalised());
        QCOMPARE(matrix->value(6, 6), 166.0 / 565.0);
        QCOMPARE(matrix->cellText(6, 6), QString("29%"));
    }

    // Audit item 19: the cell figures are never drawn below a legible size; cells too small for
    // one show colour only, and a cell's tooltip gives its figure.
    void cellFiguresAreLegibleOrInTheTooltip() {
        TrainingRun run;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(adamRun));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        cnnstudio::ui::ConfusionMatrixPlot* matrix = dashboard.confusionMatrix();
        matrix->setParent(nullptr);
        matrix->resize(700, 650);  // roomy: figures at the page's own size
        const auto roomy = matrix->cellFigureFont();
        QVERIFY(roomy);
        QCOMPARE(roomy->pointSizeF(), QFontInfo(matrix->font()).pointSizeF());
        matrix->resize(310, 330);  // as in Run history at 1024x700
        const auto small = matrix->cellFigureFont();
        QVERIFY2(!small || small->pointSizeF() >= 7, qPrintable(QString::number(small ? small->pointSizeF() : 0)));
        matrix->resize(220, 200);  // the smallest it takes: no room for legible figures
        QVERIFY(!matrix->cellFigureFont());
        // The cell of true Shirt, predicted T-shirt/top (row 6, column 0), by its tooltip.
        QRectF cell;
        for (int y = 0; y < matrix->height() && cell.isNull(); ++y)
            for (int x = 0; x < matrix->width(); ++x)
                if (matrix->cellToolTipAt(QPointF(x, y)).startsWith("true Shirt, predicted T-shirt/top")) {
                    cell = QRectF(x, y, 1, 1);
                    break;
                }
        QVERIFY(!cell.isNull());
        QCOMPARE(matrix->cellToolTipAt(cell.topLeft()), QString("true Shirt, predicted T-shirt/top: 123"));
        QVERIFY(matrix->cellToolTipAt(QPointF(1, 1)).isEmpty());  // the axis title, not a cell
    }

    void replotsAreThrottledToTenASecond() {
        TrainingRun run;
        run.addEvent(runStartedEvent(1, 100000));
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

    void aSecondRunIsOverlaidInItsOwnColour() {
        TrainingRun run, other;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(adamRun));
        other.loadEventsFile(cnnstudio::ui::tests::testDataPath(sgdRun));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        QCOMPARE(dashboard.comparisonCount(), 0);
        dashboard.setComparisons({&other});
        QCPGraph* overlay = dashboard.comparisonCurve(0, Curve::EpochValidationAccuracy);
        QVERIFY(overlay && overlay->visible());
        QCOMPARE(overlay->data()->size(), 3);
        QCOMPARE(overlay->data()->at(2)->value, 75.41666666666667);
        QVERIFY(overlay->pen().color() != dashboard.curve(Curve::EpochValidationAccuracy)->pen().color());
        QCOMPARE(dashboard.comparisonCurve(0, Curve::EpochTrainAccuracy)->pen().style(), Qt::DashLine);
        auto* note = dashboard.findChild<QLabel*>("comparisonNote");
        QVERIFY(note && note->text().contains("20261130-014251-lenet5-sgd"));
        dashboard.setComparisons({});
        QCOMPARE(dashboard.comparisonCount(), 0);
        QVERIFY(!note->isVisibleTo(&dashboard));
    }

    // Every legend has a row of its own under its plot's axes: no entry can cover a curve.
    void legendsSitOutsideThePlots() {
        TrainingRun run, other;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(adamRun));
        other.loadEventsFile(cnnstudio::ui::tests::testDataPath(sgdRun));
        TrainingDashboard dashboard;
        dashboard.resize(1024, 700);
        dashboard.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
        dashboard.setRun(&run);
        dashboard.setComparisons({&other});
        for (QCustomPlot* plot : {dashboard.lossPlot(), dashboard.accuracyPlot()}) {
            plot->replot(QCustomPlot::rpImmediateRefresh);
            QCOMPARE(plot->legend->layout(), static_cast<QCPLayout*>(plot->plotLayout()));
            QVERIFY(!plot->legend->outerRect().intersects(plot->axisRect()->rect()));
        }
    }

    // A run that logs no step events (epochs shorter than the log interval) still shows its
    // progress and speed from the epoch events, and no "0 images/s" before anything is known.
    void progressComesFromEpochsWhenThereAreNoSteps() {
        TrainingRun run;
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        run.addEvent(runStartedEvent(3, 20));
        dashboard.refreshNow();
        auto* throughput = dashboard.findChild<QLabel*>("throughput");
        QVERIFY2(!throughput->text().contains("0 images/s"), qPrintable(throughput->text()));
        cnnstudio::EpochEvent epoch;
        epoch.epoch = 1;
        epoch.step = 20;
        epoch.imagesPerSecond = 950;
        epoch.learningRate = 0.001;
        run.addEvent({{}, epoch});
        dashboard.refreshNow();
        QCOMPARE(throughput->text(), QString("950 images/s"));
        QVERIFY2(dashboard.findChild<QProgressBar*>("runProgress")->format().startsWith("step 20 of 60"),
                 qPrintable(dashboard.findChild<QProgressBar*>("runProgress")->format()));
    }

    void aStoppedRunSaysItCanBeResumed() {
        TrainingRun run;
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(sgdRun));
        QCOMPARE(run.state(), TrainingRun::State::Finished);
        QVERIFY(run.finishedEvent().has_value());
        QCOMPARE(QString::fromStdString(run.finishedEvent()->reason), QString("stopped"));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        QVERIFY2(dashboard.statusText().contains("resume", Qt::CaseInsensitive), qPrintable(dashboard.statusText()));
    }

    void aTruncatedLastLineIsSkippedAndCounted() {
        QTemporaryDir folder;
        QFile source(cnnstudio::ui::tests::testDataPath(adamRun + "/events.jsonl"));
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
        QCOMPARE(run.epochs().size(), qsizetype(4));
        QCOMPARE(run.state(), TrainingRun::State::Running);  // it never said it finished
        QCOMPARE(run.runDirectory(), folder.path());
    }

    void eventsOfAnotherSchemaAreSkipped() {
        QTemporaryDir folder;
        QFile log(folder.filePath("events.jsonl"));
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write(stepLine(2, "step", 1) + stepLine(1, "something_new", 1) + stepLine(1, "step", 2));
        log.close();
        TrainingRun run;
        QCOMPARE(run.loadEventsFile(folder.path()), 0);  // skipped, not malformed
        QCOMPARE(run.steps().size(), qsizetype(1));
        QCOMPARE(run.steps().first().step, qint64(2));
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
        run.loadEventsFile(cnnstudio::ui::tests::testDataPath(adamRun));
        TrainingDashboard dashboard;
        dashboard.setRun(&run);
        // One file asked for, one file written: the two plots one above the other.
        dashboard.exportPlots(folder.filePath("lenet.png"));
        const QImage plots(folder.filePath("lenet.png"));
        QVERIFY(!plots.isNull());
        QVERIFY(plots.height() > plots.width());
        dashboard.exportPlots(folder.filePath("lenet.pdf"));
        QFile pdf(folder.filePath("lenet.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");
        QCOMPARE(QDir(folder.path()).entryList(QDir::Files).size(), qsizetype(2));
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, dashboard.exportPlots("/nonexistent/folder/p.png"));

        dashboard.exportMetricsCsv(folder.filePath("metrics.csv"));
        QFile csv(folder.filePath("metrics.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 5);
        QVERIFY(lines[0].startsWith("epoch,step,train_loss,train_accuracy,validation_loss,validation_accuracy"));
        QVERIFY2(lines[1].startsWith("1,50,1.2533786,0.55875,0.70785284,0.74633333,"), qPrintable(lines[1]));
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, dashboard.exportMetricsCsv("/nonexistent/folder/m.csv"));
    }
};

CNNSTUDIO_GUI_TEST(TrainingDashboardTest);

#include "training_dashboard_test.moc"
