// A sweep of the Hardware page run for real: the page starts the real cnnstudio-bench for a tiny
// network, all configurations in one process, shows the report it wrote, which the benchmark also
// keeps in the hardware folder; Cancel kills the running benchmark's process group and records the
// configurations left as cancelled. Skips, saying why, when cnnstudio-bench is not built or has
// no sweep reports yet.
#include <csignal>
#include <cerrno>

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "cnnstudio/bench_report.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/ui/hardware/bench_sweep_runner.h"
#include "cnnstudio/ui/hardware/hardware_area.h"
#include "cnnstudio/ui/hardware/hardware_comparison.h"
#include "cnnstudio/ui/hardware/speedup_chart.h"
#include "cnnstudio/ui/hardware/sweep_planner.h"
#include "cnnstudio/ui/training/network_fit.h"
#include "gui_tests.h"

using namespace cnnstudio::ui;

namespace {

constexpr int sweepWaitMs = 240000;

// Why the real benchmark cannot be used here, or empty when it can.
QString benchUnusableReason() {
    if (!QFileInfo(CNNSTUDIO_BENCH_PATH).isExecutable())
        return QStringLiteral("cnnstudio-bench is not built at %1; build the cnnstudio-bench target").arg(CNNSTUDIO_BENCH_PATH);
    QProcess help;
    help.start(CNNSTUDIO_BENCH_PATH, {"--help"});
    if (!help.waitForFinished(20000)) return QStringLiteral("cnnstudio-bench --help did not answer");
    const QString text = QString::fromUtf8(help.readAllStandardOutput());
    if (!text.contains("--report") || !text.contains("--progress-events"))
        return QStringLiteral("this cnnstudio-bench writes no sweep reports (--report, --progress-events)");
    return {};
}

// A few seconds of work: lenet5, 8 images a step, one timed step per repeat.
SweepPlan tinyPlan() {
    SweepPlan plan;
    plan.model = "lenet5";
    plan.batch = 8;
    plan.steps = 1;
    plan.backends = {"cpu-ref", "cpu"};
    plan.cpuThreads = {1, 2};
    return plan;
}

// cnnstudio-bench keeps a copy of each finished sweep under $XDG_DATA_HOME: here, not the user's.
void keepReportsIn(const QTemporaryDir& folder) { qputenv("XDG_DATA_HOME", folder.path().toUtf8()); }
QString keptFolder(const QTemporaryDir& folder) { return folder.filePath("cnnstudio/hardware"); }

void prepare(HardwareArea& area) {
    area.runner()->setBenchProgram(CNNSTUDIO_BENCH_PATH);
    QTRY_VERIFY_WITH_TIMEOUT(area.planner()->hasHardware(), 60000);
    // Two threads even on a one-core machine: the sweep only needs to run, not to be fast.
    cnnstudio::HardwareInfo hardware = area.planner()->hardware();
    hardware.cpuCores = std::max(hardware.cpuCores, 2);
    area.planner()->setHardware(hardware);
    area.planner()->setPlan(tinyPlan());
}

}  // namespace

class HardwareSweepTest : public QObject {
    Q_OBJECT

private slots:
    void sweepRunsEveryConfigurationAndShowsTheReport() {
        if (const QString why = benchUnusableReason(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir folder;
        keepReportsIn(folder);
        HardwareArea area;
        prepare(area);
        QCOMPARE(area.planner()->configurationList()->count(), 3);
        // A plan the page would refuse shows a modal message, which would wait for a click here.
        const QStringList problems = area.planner()->plan().problems(area.planner()->hardware());
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(' ')));
        QSignalSpy progress(area.runner(), &BenchSweepRunner::progress);
        QSignalSpy finished(area.runner(), &BenchSweepRunner::finished);
        area.planner()->runButton()->click();
        QVERIFY(area.runner()->isRunning());
        QVERIFY(!area.planner()->runButton()->isEnabled());
        QVERIFY(area.planner()->cancelButton()->isEnabled());
        QVERIFY(finished.wait(sweepWaitMs) || finished.size() == 1);
        QCOMPARE(finished.first().at(1).toBool(), false);

        const auto& reports = area.comparison()->reports();
        QCOMPARE(int(reports.size()), 1);
        const cnnstudio::BenchReport& report = reports.front().report;
        QCOMPARE(int(report.configurations.size()), 3);
        for (const cnnstudio::BenchConfiguration& configuration : report.configurations) {
            QVERIFY2(configuration.ok(), configuration.error.c_str());
            QVERIFY(configuration.trainImagesPerSecond.median > 0);
        }
        QVERIFY(report.network.name == "lenet5");
        QVERIFY(progress.size() >= 3);
        // The chart draws what was measured, and the sweep is kept for the Train page's predictions.
        QCOMPARE(area.speedupChart()->drawnBars().size(), 3);
        QCOMPARE(area.speedupChart()->drawnBars().first().imagesPerSecond,
                 report.configurations.front().trainImagesPerSecond.median);
        const QStringList kept = QDir(keptFolder(folder)).entryList({"*.json"}, QDir::Files);
        QCOMPARE(kept.size(), 1);
        QCOMPARE(cnnstudio::loadBenchReport(QDir(keptFolder(folder)).filePath(kept.first()).toStdString())
                     .configurations.size(),
                 std::size_t(3));
        QVERIFY(area.planner()->runButton()->isEnabled());
    }

    void cancelKillsTheBenchmarkAndRecordsWhatIsLeft() {
        if (const QString why = benchUnusableReason(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir folder;
        keepReportsIn(folder);
        HardwareArea area;
        prepare(area);
        // The fast oneDNN backend first, then cpu-ref on fer-cnn, which takes minutes: Cancel
        // reaches it while it measures.
        SweepPlan plan = tinyPlan();
        plan.model = "fer-cnn";
        plan.backends = {"cpu", "cpu-ref"};
        plan.cpuThreads = {1};
        area.planner()->setPlan(plan);
        QCOMPARE(area.planner()->configurationList()->count(), 2);
        // Cancel as soon as the second configuration is being measured.
        qint64 cancelledProcess = 0;
        connect(area.runner(), &BenchSweepRunner::progress, this, [&](int index) {
            if (index != 1 || cancelledProcess != 0) return;
            QTimer::singleShot(0, this, [&] {
                cancelledProcess = area.runner()->processId();
                area.planner()->cancelButton()->click();
            });
        });
        QSignalSpy finished(area.runner(), &BenchSweepRunner::finished);
        area.planner()->runButton()->click();
        QVERIFY(finished.wait(sweepWaitMs) || finished.size() == 1);
        QCOMPARE(finished.first().at(1).toBool(), true);
        QVERIFY(cancelledProcess > 0);
        // The whole process group is gone.
        QCOMPARE(::kill(-pid_t(cancelledProcess), 0), -1);
        QCOMPARE(errno, ESRCH);

        const cnnstudio::BenchReport& report = area.comparison()->reports().front().report;
        QCOMPARE(int(report.configurations.size()), 2);
        QVERIFY2(report.configurations[0].ok(), report.configurations[0].error.c_str());
        QVERIFY(report.configurations[1].status == cnnstudio::BenchStatus::Cancelled);
        // The planner orders configurations as its backend boxes: cpu-ref, then cpu.
        QCOMPARE(QString::fromStdString(report.configurations[1].label), QString("cpu 1 thread"));
        QCOMPARE(area.speedupChart()->drawnBars().size(), 1);
        QVERIFY(!area.runner()->isRunning());
        QVERIFY(area.planner()->runButton()->isEnabled());
    }

    // Audit item 23: the Design page's network, fitted to the data set as a run would fit it,
    // is measured by the real benchmark from the spec file the page writes, and the report names it.
    void theDesignedNetworkIsMeasuredAndNamedInTheReport() {
        if (const QString why = benchUnusableReason(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir folder;
        keepReportsIn(folder);
        HardwareArea area;
        prepare(area);
        cnnstudio::NetworkSpec drawn = cnnstudio::loadPreset("lenet5");
        drawn.name = "my-lenet";
        cnnstudio::ui::DatasetSummary colour;  // 32×32 colour images in three classes
        colour.channels = 3;
        colour.height = colour.width = 32;
        colour.classNames = {"a", "b", "c"};
        const NetworkFit fit = fitNetworkToData(drawn, "folder:/data/colour", colour);
        QVERIFY2(fit.canTrain(), qPrintable(fit.refusal));
        area.planner()->setDesignedNetwork(designedNetworkToSweep(drawn, cnnstudio::analyseSpec(drawn), fit));
        SweepPlan plan = tinyPlan();
        plan.backends = {"cpu"};
        plan.cpuThreads = {1};
        area.planner()->setPlan(plan);
        area.planner()->chooseDesignedNetwork();
        QVERIFY2(area.planner()->problems().isEmpty(), qPrintable(area.planner()->problems().join(' ')));
        QSignalSpy finished(area.runner(), &BenchSweepRunner::finished);
        area.planner()->runButton()->click();
        QVERIFY(finished.wait(sweepWaitMs) || finished.size() == 1);

        const cnnstudio::BenchReport& report = area.comparison()->reports().front().report;
        QCOMPARE(int(report.configurations.size()), 1);
        QVERIFY2(report.configurations[0].ok(), report.configurations[0].error.c_str());
        QCOMPARE(QString::fromStdString(report.network.name), QString("my-lenet"));
        // Lenet5's input is 28×28 grey and it ends in ten units: the folder's images are resized to
        // the input, and its three classes make the classifier three units.
        QCOMPARE(report.network.input, std::vector<int>({1, 28, 28}));
        QCOMPARE(report.network.classes, 3);
        const QString header = area.findChild<QLabel*>("reportSummary")->text();
        QVERIFY2(header.contains("my-lenet (28×28 grey, 3 classes)"), qPrintable(header));
    }

    void missingBenchmarkFailsEveryConfigurationWithTheReason() {
        QTemporaryDir folder;
        keepReportsIn(folder);
        HardwareArea area;
        area.runner()->setBenchProgram(folder.filePath("no-such-bench"));
        area.planner()->setHardware([] {
            cnnstudio::HardwareInfo hardware;
            hardware.cpuCores = 2;
            return hardware;
        }());
        area.planner()->setPlan(tinyPlan());
        QSignalSpy finished(area.runner(), &BenchSweepRunner::finished);
        area.runSweep();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 20000);
        const cnnstudio::BenchReport& report = area.comparison()->reports().front().report;
        QCOMPARE(int(report.configurations.size()), 3);
        for (const cnnstudio::BenchConfiguration& configuration : report.configurations) {
            QVERIFY(configuration.status == cnnstudio::BenchStatus::Failed);
            QVERIFY2(QString::fromStdString(configuration.error).contains("no-such-bench"), configuration.error.c_str());
        }
        QVERIFY(!area.runner()->isRunning());
        QVERIFY(area.planner()->runButton()->isEnabled());
    }
};

CNNSTUDIO_GUI_TEST(HardwareSweepTest);
#include "hardware_sweep_test.moc"
