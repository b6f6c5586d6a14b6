// The Train page before and after a run: it says what the run will change in the network to fit
// the data set (and refuses a network that cannot be fitted, or a batch beyond the memory, in the
// user's words); after a kill or a launch that failed, the header and Run history tell the truth
// about the run.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "cnnstudio/hardware.h"
#include "cnnstudio/memory_estimate.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/safetensors.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/history/run_catalogue.h"
#include "cnnstudio/ui/training/memory_fit.h"
#include "cnnstudio/ui/training/network_fit.h"
#include "cnnstudio/ui/training/network_fit_notice.h"
#include "cnnstudio/ui/training/train_area.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_run.h"
#include "cnnstudio/ui/training/training_session.h"
#include "gui_tests.h"

using cnnstudio::ui::DatasetSummary;
using cnnstudio::ui::NetworkFit;
using cnnstudio::ui::RunSettings;
using cnnstudio::ui::TrainArea;
using cnnstudio::ui::TrainingSession;
using cnnstudio::ui::tests::fashionMnistShape;

namespace {

constexpr int workerWaitMs = 20000;
constexpr int datasetLoadMs = 120000;

// Input -> Conv2D -> ReLU: no Flatten and no Dense, so no class scores.
cnnstudio::NetworkSpec networkWithoutClassifierHead() {
    cnnstudio::NetworkSpec spec;
    spec.name = "headless";
    spec.nodes.push_back({"input", "Input", {{"channels", 1}, {"height", 28}, {"width", 28}}, {}});
    spec.nodes.push_back({"conv", "Conv2D", {{"filters", 8}, {"kernel", 3}, {"padding", 1}}, {"input"}});
    spec.nodes.push_back({"relu", "ReLU", nlohmann::json::object(), {"conv"}});
    return spec;
}

QString copyWorker(const QTemporaryDir& folder, const QString& name) {
    const QString path = folder.filePath("fake-worker");
    if (!QFile::copy(cnnstudio::ui::tests::testDataPath("fake-workers/" + name), path)) return {};
    QFile(path).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
}

std::optional<TrainingSession::Refusal> startLenet(TrainingSession& session, const QString& runsRoot) {
    const cnnstudio::NetworkSpec spec = cnnstudio::loadPreset("lenet5");
    return session.start(RunSettings{}, spec, cnnstudio::analyseSpec(spec), NetworkFit{}, runsRoot);
}

}  // namespace

class TrainPageTest : public QObject {
    Q_OBJECT

private slots:
    void ferCnnOnFashionMnistSaysWhatIsAdapted() {
        const NetworkFit fit = cnnstudio::ui::fitNetworkToData(cnnstudio::loadPreset("fer-cnn"), "fashion-mnist",
                                                               fashionMnistShape());
        QVERIFY(fit.known);
        QVERIFY2(fit.canTrain(), qPrintable(fit.refusal));
        QCOMPARE(fit.changes.size(), qsizetype(2));
        QVERIFY2(fit.changes[0].contains("28×28 grey") && fit.changes[0].contains("48×48 grey"),
                 qPrintable(fit.changes[0]));
        QVERIFY2(fit.changes[1].contains("10 units instead of 7"), qPrintable(fit.changes[1]));
    }

    void aNetworkThatFitsNeedsNoNotice() {
        const NetworkFit fit =
            cnnstudio::ui::fitNetworkToData(cnnstudio::loadPreset("lenet5"), "fashion-mnist", fashionMnistShape());
        QVERIFY(fit.known && fit.canTrain());
        QVERIFY2(!fit.adapted(), qPrintable(fit.changes.join('\n')));
    }

    void aNetworkWithoutClassifierHeadIsRefusedInTheUsersWords() {
        const NetworkFit fit =
            cnnstudio::ui::fitNetworkToData(networkWithoutClassifierHead(), "fashion-mnist", fashionMnistShape());
        QVERIFY(!fit.canTrain());
        QVERIFY2(fit.refusal.contains("classifier head") && fit.refusal.contains("Dense"), qPrintable(fit.refusal));
        QVERIFY2(!fit.refusal.contains("adaptSpecToDataset"), qPrintable(fit.refusal));

        TrainingSession session;
        const cnnstudio::NetworkSpec spec = networkWithoutClassifierHead();
        QTemporaryDir runs;
        const auto refusal = session.start(RunSettings{}, spec, cnnstudio::analyseSpec(spec), fit, runs.path());
        QVERIFY(refusal);
        QCOMPARE(refusal->fixOn, TrainingSession::Refusal::Page::Design);
        QVERIFY(!session.isRunning());
    }

    // A batch beyond the memory the run trains in is refused before the worker starts, on the
    // Training tab, with a batch that fits (the worker refuses it too, in the command line's words).
    void aBatchBeyondTheMemoryIsRefusedBeforeTrainingNamingOneThatFits() {
        NetworkFit fit = cnnstudio::ui::fitNetworkToData(cnnstudio::loadPreset("fer-cnn"), "fashion-mnist",
                                                         fashionMnistShape());
        QVERIFY(fit.known && fit.canTrain());
        RunSettings settings;
        settings.backend = "cpu";
        settings.batchSize = 4096;
        const cnnstudio::MemoryEstimate estimate =
            cnnstudio::estimateTrainingMemory(fit.fitted, sizeof(float), settings.optimizer.toStdString());
        const std::size_t roomFor100 = std::size_t(estimate.bytesFor(100));  // a machine with room for ~100 images
        fit.memoryRefusal = cnnstudio::ui::batchMemoryRefusal(fit, settings, {}, roomFor100);
        QVERIFY2(fit.memoryRefusal.contains("A batch of 4096 needs about") &&
                     fit.memoryRefusal.contains("this machine's memory") &&
                     fit.memoryRefusal.contains("Set the batch size to 64 or less"),
                 qPrintable(fit.memoryRefusal));
        settings.batchSize = 64;
        QVERIFY(cnnstudio::ui::batchMemoryRefusal(fit, settings, {}, roomFor100).isEmpty());
        settings.batchSize = 4096;
        settings.cpuRankCount = 2;  // two ranks share the machine: each has room for ~50
        QVERIFY2(cnnstudio::ui::batchMemoryRefusal(fit, settings, {}, roomFor100).contains("32 or less"),
                 qPrintable(cnnstudio::ui::batchMemoryRefusal(fit, settings, {}, roomFor100)));

        // On a GPU, the chosen GPU's free memory as discovered; an undiscovered GPU is not checked.
        settings.backend = "cudnn";
        settings.cpuRankCount = 1;
        settings.gpuIndices = {1};
        cnnstudio::HardwareInfo hardware;
        hardware.gpus.push_back({0, "big", 0, roomFor100 * 100});
        hardware.gpus.push_back({1, "small", 0, roomFor100});
        QVERIFY2(cnnstudio::ui::batchMemoryRefusal(fit, settings, hardware, std::nullopt).contains("GPU 1 (small)"),
                 qPrintable(cnnstudio::ui::batchMemoryRefusal(fit, settings, hardware, std::nullopt)));
        settings.gpuIndices = {0};
        QVERIFY(cnnstudio::ui::batchMemoryRefusal(fit, settings, hardware, std::nullopt).isEmpty());
        settings.gpuIndices = {5};
        QVERIFY(cnnstudio::ui::batchMemoryRefusal(fit, settings, hardware, std::nullopt).isEmpty());

        TrainingSession session;
        QTemporaryDir runs;
        const cnnstudio::NetworkSpec spec = cnnstudio::loadPreset("fer-cnn");
        const auto refusal = session.start(RunSettings{}, spec, cnnstudio::analyseSpec(spec), fit, runs.path());
        QVERIFY(refusal);
        QCOMPARE(refusal->fixOn, TrainingSession::Refusal::Page::Train);
        QVERIFY(!session.isRunning());
    }

    // The same on the page: a batch of 65536 vgg-fer images needs far more than any machine here.
    void theMemoryRefusalAppearsOnTheTrainPage() {
        TrainingSession session;
        TrainArea area(&session);
        area.resize(1024, 700);
        area.show();
        area.setNetwork(cnnstudio::loadPreset("vgg-fer"));
        QTRY_VERIFY_WITH_TIMEOUT(area.networkFit().known, datasetLoadMs);
        QVERIFY(area.networkFit().memoryRefusal.isEmpty());
        area.findChild<QSpinBox*>("batchSize")->setValue(65536);
        QVERIFY2(!area.networkFit().memoryRefusal.isEmpty(), "refreshed as the batch changes");
        QVERIFY(area.fitNotice()->isVisible());
        QVERIFY2(area.fitNotice()->text().contains("The batch does not fit in memory"),
                 qPrintable(area.fitNotice()->text()));
    }

    // The page as the user sees it: fer-cnn with the built-in Fashion-MNIST chosen.
    void theAdaptWarningAppearsOnTheTrainPage() {
        TrainingSession session;
        TrainArea area(&session);
        area.resize(1024, 700);
        area.show();
        area.setNetwork(cnnstudio::loadPreset("fer-cnn"));
        QTRY_VERIFY_WITH_TIMEOUT(area.networkFit().known, datasetLoadMs);
        QVERIFY(area.fitNotice()->isVisible());
        const QString text = area.fitNotice()->text();
        QVERIFY2(text.contains("fer-cnn will be adapted"), qPrintable(text));
        QVERIFY2(text.contains("28×28 grey") && text.contains("10 units"), qPrintable(text));

        area.setNetwork(cnnstudio::loadPreset("lenet5"));  // drawn for Fashion-MNIST: nothing to say
        QVERIFY(!area.fitNotice()->isVisible());
    }

    void afterKillTheHeaderAndRunHistorySayKilledNotFailed() {
        QTemporaryDir folder;
        TrainingSession session;
        session.controller()->setWorkerProgram(copyWorker(folder, "events-then-sleeps.sh"));
        TrainArea area(&session);
        cnnstudio::ui::TrainingDashboard* dashboard = area.dashboard();
        QSignalSpy ended(&session, &TrainingSession::runEnded);
        QVERIFY(!startLenet(session, folder.filePath("runs")));
        QTRY_COMPARE_WITH_TIMEOUT(session.liveRun()->steps().size(), qsizetype(2), workerWaitMs);
        dashboard->refreshNow();
        QVERIFY2(dashboard->statusText().contains("Training"), qPrintable(dashboard->statusText()));
        auto* progress = dashboard->findChild<QProgressBar*>("runProgress");
        QVERIFY2(progress->format().contains("step 10 of 60"), qPrintable(progress->format()));

        session.kill();
        QVERIFY(ended.wait(workerWaitMs));
        dashboard->refreshNow();
        const QString status = dashboard->statusText();
        QVERIFY2(!status.contains("Training") && !status.contains("epoch 1 of 3"), qPrintable(status));
        // Killed as the user asked, not failed (audit item 9).
        QVERIFY2(status.contains("killed") && !status.contains("Failed"), qPrintable(status));
        QCOMPARE(session.liveRun()->state(), cnnstudio::ui::TrainingRun::State::Killed);
        QVERIFY2(!progress->format().contains("left"), qPrintable(progress->format()));
        QVERIFY(area.trainButton()->isEnabled());

        // Run history lists the killed run as killed, with no failure to explain. (This worker
        // writes no checkpoint, so there is nothing to resume from here.)
        const cnnstudio::ui::RunRecord record = cnnstudio::ui::readRunRecord(ended.at(0).at(0).toString());
        QCOMPARE(record.status, QString("killed by you"));
        QVERIFY(record.failureReason.isEmpty());
    }

    // Audit item 13: after Stop, the Train page itself offers Resume for the run it trained, and
    // hides it again once a run launches.
    void afterStopTheTrainPageOffersResume() {
        QTemporaryDir folder;
        TrainingSession session;
        session.controller()->setWorkerProgram(copyWorker(folder, "stops-after-checkpoint.sh"));
        TrainArea area(&session);
        area.show();
        auto* resume = area.dashboard()->findChild<QPushButton*>("resumeButton");
        QVERIFY(resume);
        QVERIFY(!resume->isVisible());
        QSignalSpy ended(&session, &TrainingSession::runEnded);
        QVERIFY(!startLenet(session, folder.filePath("runs")));
        QTRY_COMPARE_WITH_TIMEOUT(session.liveRun()->steps().size(), qsizetype(1), workerWaitMs);
        const QString runDirectory = session.controller()->runDirectory();
        QVERIFY(cnnstudio::ui::tests::writeCheckpoint(runDirectory + "/checkpoints/latest"));
        QVERIFY(!resume->isVisible());

        session.stop();
        QVERIFY(ended.wait(workerWaitMs));
        area.dashboard()->refreshNow();
        QVERIFY2(!area.dashboard()->statusText().contains("Run history"), qPrintable(area.dashboard()->statusText()));
        QVERIFY(resume->isVisible() && resume->isEnabled());
        QSignalSpy resumeRequested(&area, &TrainArea::resumeRequested);
        resume->click();
        QCOMPARE(resumeRequested.count(), 1);
        QCOMPARE(resumeRequested.at(0).at(0).toString(), runDirectory);

        emit session.launching();
        QVERIFY(!resume->isVisible());
    }

    // Audit item 26: a run stopped before its first epoch ended says at which step, not "after 0
    // epoch(s)".
    void aRunStoppedInItsFirstEpochSaysAtWhichStep() {
        QTemporaryDir folder;
        TrainingSession session;
        session.controller()->setWorkerProgram(copyWorker(folder, "stops-after-checkpoint.sh"));
        TrainArea area(&session);
        QSignalSpy ended(&session, &TrainingSession::runEnded);
        QVERIFY(!startLenet(session, folder.filePath("runs")));
        QTRY_COMPARE_WITH_TIMEOUT(session.liveRun()->steps().size(), qsizetype(1), workerWaitMs);
        session.stop();
        QVERIFY(ended.wait(workerWaitMs));
        area.dashboard()->refreshNow();
        const QString status = area.dashboard()->statusText();
        QVERIFY2(status.contains("at step 5, in its first epoch") && !status.contains("epoch(s)"), qPrintable(status));
    }

    // Audit item 26: the refusal of a broken network opens the Design page itself, so its message
    // does not tell the user to go there.
    void aBrokenNetworkIsRefusedWithoutSendingTheUserElsewhere() {
        cnnstudio::NetworkSpec spec = networkWithoutClassifierHead();
        spec.nodes[1].params.erase("filters");
        const cnnstudio::ShapeReport report = cnnstudio::analyseSpec(spec);
        QVERIFY(!report.ok());
        TrainingSession session;
        QTemporaryDir folder;
        const auto refusal = session.start(RunSettings{}, spec, report, NetworkFit{}, folder.path());
        QVERIFY(refusal);
        QCOMPARE(refusal->fixOn, TrainingSession::Refusal::Page::Design);
        QVERIFY2(!refusal->message.contains("Design page") && refusal->message.contains("filters"),
                 qPrintable(refusal->message));
    }

    // A launch that ends before the worker writes anything (a multi-node launch whose mpirun
    // cannot reach a host) still leaves a run folder that Run history lists as failed.
    void aLaunchThatFailsEarlyIsRecordedAsFailed() {
        QTemporaryDir folder;
        TrainingSession session;
        session.controller()->setWorkerProgram(copyWorker(folder, "exit-without-finished.sh"));
        QSignalSpy ended(&session, &TrainingSession::runEnded);
        QVERIFY(!startLenet(session, folder.filePath("runs")));
        QVERIFY(ended.wait(workerWaitMs));
        QCOMPARE(session.liveRun()->state(), cnnstudio::ui::TrainingRun::State::Failed);

        const QList<cnnstudio::ui::RunRecord> records = cnnstudio::ui::scanRunsFolder(folder.filePath("runs"));
        QCOMPARE(records.size(), qsizetype(1));
        QCOMPARE(records[0].status, QString("failed"));
        QCOMPARE(records[0].model, QString("lenet5"));
        QVERIFY2(records[0].failureReason.contains("code 3") &&
                     records[0].failureReason.contains("Segmentation fault in conv kernel"),
                 qPrintable(records[0].failureReason));
    }
};

CNNSTUDIO_GUI_TEST(TrainPageTest);

#include "train_page_test.moc"
