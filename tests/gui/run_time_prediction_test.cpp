// The Train page's predicted run time: from the latest benchmark report of this machine before
// Train is pressed (and into the worker's arguments), the probe offered when no report predicts
// it and run through a worker program, and predicted beside actual once the run has finished.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>

#include "cnnstudio/bench_measure.h"
#include "cnnstudio/bench_report.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/ui/training/run_settings_panel.h"
#include "cnnstudio/ui/training/run_time_estimate.h"
#include "cnnstudio/ui/training/train_area.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_run.h"
#include "cnnstudio/ui/training/training_session.h"
#include "gui_tests.h"

using cnnstudio::BenchConfiguration;
using cnnstudio::BenchReport;
using cnnstudio::ui::RunSettings;
using cnnstudio::ui::TrainArea;
using cnnstudio::ui::TrainingSession;

namespace {

constexpr int datasetLoadMs = 120000;

// A report of this machine (by host name) that measured `backend` at 1000 training and 4000
// inference images/s on another network than the one trained, so the prediction is scaled.
BenchReport reportOfThisMachine(const std::string& backend, const std::string& precision) {
    BenchReport report;
    report.created = "2026-12-01T03:10:00Z";
    report.tool = {"cnnstudio-bench", "0.1.0", "cnnstudio-bench --backend " + backend};
    report.machine.hostname = QSysInfo::machineHostName().toStdString();
    report.machine.label = report.machine.hostname;
    report.network = {"other-net", {1, 28, 28}, 10, 1000, 0.001};
    BenchConfiguration c;
    c.label = backend + " measured";
    c.backend = backend;
    c.precision = precision;
    c.batch = 64;
    c.devices = "cpu";
    c.trainImagesPerSecond = cnnstudio::BenchThroughput::fromRepeats({1000, 1000, 1000});
    c.inferenceImagesPerSecond = 4000;
    report.configurations.push_back(c);
    return report;
}

// A stand-in for cnnstudio-bench in `folder` that writes `report` wherever --report asks.
QString fakeBenchWriting(const BenchReport& report, const QTemporaryDir& folder) {
    const QString canned = folder.filePath("canned.json");
    cnnstudio::saveBenchReport(report, canned.toStdString());
    const QString worker = folder.filePath("fake-bench");
    QFile script(worker);
    if (!script.open(QIODevice::WriteOnly)) return {};
    script.write(QStringLiteral("#!/bin/sh\n"
                                "while [ $# -gt 0 ]; do [ \"$1\" = --report ] && cp '%1' \"$2\"; shift; done\n")
                     .arg(canned)
                     .toUtf8());
    script.close();
    script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return worker;
}

// A Train page reading reports and kept probes from `folder`, showing lenet5 trained on cpu fp32
// with `batch`, once the data set has been read.
void showLenetOnCpu(TrainArea& area, const QTemporaryDir& folder, int batch) {
    area.setHardwareReportFolder(folder.path().toStdString());
    RunSettings settings = area.settingsPanel()->settings();
    settings.backend = "cpu";
    settings.precision = "fp32";
    settings.threads = 1;
    settings.batchSize = batch;
    area.settingsPanel()->setSettings(settings);
    area.show();
    area.setNetwork(cnnstudio::loadPreset("lenet5"));
    QTRY_VERIFY_WITH_TIMEOUT(area.networkFit().known, datasetLoadMs);
    area.refreshPrediction();
}

}  // namespace

class RunTimePredictionTest : public QObject {
    Q_OBJECT

private slots:
    void thePredictionFromThisMachinesReportShowsBeforeTrain() {
        QTemporaryDir folder;
        cnnstudio::saveToHardwareFolder(reportOfThisMachine("cpu", "fp32"), folder.path().toStdString());
        BenchReport elsewhere = reportOfThisMachine("cpu", "fp32");
        elsewhere.machine.hostname = "another-machine";
        elsewhere.created = "2026-12-02T00:00:00Z";  // newer, but not this machine's
        elsewhere.configurations[0].label = "from elsewhere";
        cnnstudio::saveToHardwareFolder(elsewhere, folder.path().toStdString());

        TrainingSession session;
        TrainArea area(&session);
        area.setHardwareReportFolder(folder.path().toStdString());
        RunSettings settings = area.settingsPanel()->settings();
        settings.backend = "cpu";
        settings.epochs = 5;
        settings.limit = 0;
        area.settingsPanel()->setSettings(settings);
        area.resize(1024, 700);
        area.show();
        area.setNetwork(cnnstudio::loadPreset("lenet5"));
        QTRY_VERIFY_WITH_TIMEOUT(area.networkFit().known, datasetLoadMs);
        area.refreshPrediction();

        // Another network's speed scaled by FLOPs: said to be rough, and the probe offered (audit item 7).
        const QString text = area.predictionLabel()->text();
        QVERIFY2(text.startsWith("Rough prediction: epoch ~"), qPrintable(text));
        QVERIFY2(text.contains(", total ~"), qPrintable(text));
        QVERIFY2(text.contains("'cpu measured'") && !text.contains("elsewhere"), qPrintable(text));
        QVERIFY2(text.contains("scaled by FLOPs from other-net") && text.contains("several times off"),
                 qPrintable(text));
        QVERIFY(area.measureButton()->isVisible());
        const auto& prediction = area.runTimeEstimate().prediction;
        QVERIFY(prediction.has_value());
        QCOMPARE(prediction->totalSeconds, 5 * prediction->epochSeconds);

        // Train passes the prediction to the worker, which records it in config.json.
        const RunSettings forRun = area.settingsForRun();
        QVERIFY(forRun.prediction.has_value());
        const QStringList arguments = forRun.workerArguments("spec.json", "run");
        const qsizetype at = arguments.indexOf("--predicted-total-s");
        QVERIFY2(at > 0, qPrintable(arguments.join(' ')));
        QCOMPARE(arguments[at + 1].toDouble(), prediction->totalSeconds);
        QVERIFY(arguments.contains("--predicted-epoch-s"));
        QVERIFY(arguments.contains("--prediction-basis"));
    }

    void withoutAReportTheProbeIsOffered() {
        QTemporaryDir folder;
        cnnstudio::saveToHardwareFolder(reportOfThisMachine("cpu-ref", "fp32"), folder.path().toStdString());
        TrainingSession session;
        TrainArea area(&session);
        area.setHardwareReportFolder(folder.path().toStdString());
        RunSettings settings = area.settingsPanel()->settings();
        settings.backend = "cpu";
        area.settingsPanel()->setSettings(settings);
        area.show();
        area.setNetwork(cnnstudio::loadPreset("lenet5"));
        QTRY_VERIFY_WITH_TIMEOUT(area.networkFit().known, datasetLoadMs);
        area.refreshPrediction();
        const QString text = area.predictionLabel()->text();
        QVERIFY2(text.contains("has not measured cpu fp32"), qPrintable(text));
        QVERIFY(area.measureButton()->isVisible());
        QVERIFY2(!area.settingsForRun().prediction.has_value(), "no prediction, none recorded");
    }

    // The probe runs a worker program (cnnstudio-bench --probe); here a script that writes the
    // report it was asked for, so the test needs no build of the bench.
    void theProbeReadsTheReportItsWorkerWrote() {
        QTemporaryDir folder;
        const QString worker = fakeBenchWriting(reportOfThisMachine("cpu", "fp32"), folder);
        QVERIFY(!worker.isEmpty());

        cnnstudio::ui::RunTimeProbe probe(nullptr, worker);
        QSignalSpy measured(&probe, &cnnstudio::ui::RunTimeProbe::measured);
        QSignalSpy failed(&probe, &cnnstudio::ui::RunTimeProbe::failed);
        QVERIFY(probe.start(cnnstudio::loadPreset("lenet5"), RunSettings{}));
        QTRY_COMPARE_WITH_TIMEOUT(measured.size() + failed.size(), qsizetype(1), 10000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));

        cnnstudio::ui::RunTimeProbe broken(nullptr, folder.filePath("no-such-program"));
        QSignalSpy brokenFailed(&broken, &cnnstudio::ui::RunTimeProbe::failed);
        broken.start(cnnstudio::loadPreset("lenet5"), RunSettings{});
        QTRY_COMPARE_WITH_TIMEOUT(brokenFailed.size(), qsizetype(1), 10000);
        QVERIFY2(brokenFailed.first().first().toString().contains("cannot start"),
                 qPrintable(brokenFailed.first().first().toString()));
    }

    // Audit item 7: the probe measures the network the run trains; its report is kept in the
    // hardware folder and predicts, unscaled, before another network's report scaled by FLOPs,
    // in this session and the next, for the settings it measured.
    void aProbeOfThisNetworkIsKeptAndPreferredInTheNextSession() {
        QTemporaryDir folder;
        cnnstudio::saveToHardwareFolder(reportOfThisMachine("cpu", "fp32"), folder.path().toStdString());
        BenchReport probed = reportOfThisMachine("cpu", "fp32");
        probed.network = cnnstudio::describeNetwork(cnnstudio::loadPreset("lenet5"));
        probed.configurations[0].label = "cpu probed";
        const QString worker = fakeBenchWriting(probed, folder);
        QVERIFY(!worker.isEmpty());
        {
            TrainingSession session;
            TrainArea area(&session);
            showLenetOnCpu(area, folder, 32);
            QVERIFY2(area.predictionLabel()->text().startsWith("Rough prediction"),
                     qPrintable(area.predictionLabel()->text()));
            area.runTimeProbe()->setBenchProgram(worker);
            QVERIFY(area.measureButton()->isVisible());
            area.measureButton()->click();
            QTRY_VERIFY_WITH_TIMEOUT(area.predictionLabel()->text().startsWith("Predicted: epoch"), 10000);
            QVERIFY2(area.predictionLabel()->text().contains("'cpu probed' in a probe of this network"),
                     qPrintable(area.predictionLabel()->text()));
            QVERIFY(!area.measureButton()->isVisible());
        }
        QCOMPARE(QDir(folder.filePath("probes")).entryList({"*.json"}, QDir::Files).size(), qsizetype(1));
        {
            TrainingSession session;
            TrainArea area(&session);  // the next session
            showLenetOnCpu(area, folder, 32);
            const QString text = area.predictionLabel()->text();
            QVERIFY2(text.startsWith("Predicted: epoch") && text.contains("'cpu probed' in a probe of this network"),
                     qPrintable(text));
            QVERIFY(!area.runTimeEstimate().prediction->scaledByFlops);
            QVERIFY(!area.measureButton()->isVisible());
        }
        {
            TrainingSession session;
            TrainArea area(&session);  // a batch the probe did not measure: the rough prediction again
            showLenetOnCpu(area, folder, 128);
            QVERIFY2(area.predictionLabel()->text().startsWith("Rough prediction"),
                     qPrintable(area.predictionLabel()->text()));
        }
    }

    // The prediction is of the network the run trains, as the Train page fits it: from an image
    // folder (32×32 colour, three classes) lenet5 trains its own 28×28 grey input, resized to, and
    // three outputs; a report of that network (a Hardware-page sweep of the designed network)
    // predicts it unscaled.
    void aReportOfTheFittedNetworkPredictsItUnscaled() {
        QTemporaryDir folder;
        for (const QString& label : {"a", "b", "c"}) {
            QVERIFY(QDir(folder.path()).mkpath("images/" + label));
            for (int i = 0; i < 4; ++i) {
                QImage image(32, 32, QImage::Format_RGB888);
                image.fill(QColor(40 * i, label == "a" ? 200 : 20, label == "c" ? 200 : 20));
                QVERIFY(image.save(folder.filePath(QString("images/%1/%2.png").arg(label).arg(i))));
            }
        }
        TrainingSession session;
        TrainArea area(&session);
        RunSettings settings = area.settingsPanel()->settings();
        settings.dataset = "folder:" + folder.filePath("images");
        settings.backend = "cpu";
        settings.precision = "fp32";
        area.settingsPanel()->setSettings(settings);
        area.setNetwork(cnnstudio::loadPreset("lenet5"));
        QTRY_VERIFY_WITH_TIMEOUT(area.networkFit().known, datasetLoadMs);
        QVERIFY2(area.networkFit().canTrain(), qPrintable(area.networkFit().refusal));
        BenchReport sweep = reportOfThisMachine("cpu", "fp32");
        sweep.network = cnnstudio::describeNetwork(area.networkFit().trainedSpec);
        QCOMPARE(sweep.network.input, std::vector<int>({1, 28, 28}));
        QCOMPARE(sweep.network.classes, 3);
        cnnstudio::saveToHardwareFolder(sweep, folder.path().toStdString());
        area.setHardwareReportFolder(folder.path().toStdString());
        const auto& prediction = area.runTimeEstimate().prediction;
        QVERIFY2(prediction.has_value(), qPrintable(area.predictionLabel()->text()));
        QVERIFY2(!prediction->scaledByFlops, qPrintable(area.predictionLabel()->text()));
        QVERIFY2(area.predictionLabel()->text().startsWith("Predicted: epoch"), qPrintable(area.predictionLabel()->text()));
    }

    void theFinishedRunShowsPredictedBesideActual() {
        cnnstudio::RunStartedEvent started;
        started.epochs = 1;
        started.stepsPerEpoch = 10;
        started.config = {{"prediction", {{"epoch_s", 120.0}, {"total_s", 120.0}, {"basis", "r.json"}}}};
        cnnstudio::FinishedEvent finished;
        finished.reason = "completed";
        finished.epochsRun = 1;
        finished.wallSeconds = 50;
        cnnstudio::ui::TrainingRun run;
        run.addEvent({{}, started});
        run.addEvent({{}, finished});
        QCOMPARE(run.predictedTotalSeconds().value(), 120.0);
        cnnstudio::ui::TrainingDashboard dashboard;
        dashboard.setRun(&run);
        dashboard.refreshNow();
        QVERIFY2(dashboard.statusText().contains("predicted ~2 min, actual ~50 s"), qPrintable(dashboard.statusText()));

        cnnstudio::ui::TrainingRun unpredicted;
        started.config = nlohmann::json::object();
        unpredicted.addEvent({{}, started});
        unpredicted.addEvent({{}, finished});
        dashboard.setRun(&unpredicted);
        dashboard.refreshNow();
        QVERIFY2(!dashboard.statusText().contains("predicted"), qPrintable(dashboard.statusText()));
    }
};

CNNSTUDIO_GUI_TEST(RunTimePredictionTest);
#include "run_time_prediction_test.moc"
