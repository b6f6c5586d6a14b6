// The Hardware page without running a benchmark: choosing configurations from what a machine
// offers, opening and overlaying two reports (tests/gui/data/hardware/, round numbers so that
// speedups and efficiencies are exact), the baseline switch, the charts drawing the report's
// numbers, CSV export, and the throughput of the recorded training runs.
#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFontMetrics>
#include <QImage>
#include <QInputDialog>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <qcustomplot.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/bench_report.h"
#include "cnnstudio/error.h"
#include "cnnstudio/event_reader.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/ui/hardware/bench_chart.h"
#include "cnnstudio/ui/hardware/bench_results_table.h"
#include "cnnstudio/ui/hardware/bench_sweep_runner.h"
#include "cnnstudio/ui/hardware/hardware_area.h"
#include "cnnstudio/ui/hardware/hardware_comparison.h"
#include "cnnstudio/ui/hardware/run_throughput.h"
#include "cnnstudio/ui/hardware/run_throughput_chart.h"
#include "cnnstudio/ui/hardware/scaling_chart.h"
#include "cnnstudio/ui/hardware/speedup_chart.h"
#include "cnnstudio/ui/hardware/sweep_plan.h"
#include "cnnstudio/ui/hardware/sweep_planner.h"
#include "cnnstudio/ui/hardware/time_breakdown_chart.h"
#include "cnnstudio/ui/main_window.h"
#include "cnnstudio/ui/training/network_fit.h"
#include "cnnstudio/ui/training/train_area.h"
#include "gui_tests.h"

using namespace cnnstudio::ui;
using cnnstudio::ui::tests::fashionMnistShape;
using cnnstudio::ui::tests::testDataPath;

namespace {

QString laptopReport() { return testDataPath("hardware/laptop-fer-cnn.json"); }

// A fake cnnstudio-bench in `folder` that reports the laptop's report and says it kept a copy
// of it as keptCopy; program is empty when it could not be made.
struct FakeBench {
    QString program, keptCopy;
};
FakeBench fakeBenchKeepingACopy(const QTemporaryDir& folder) {
    FakeBench bench{folder.filePath("fake-bench"), folder.filePath("2026-12-04T22-10-15Z-vm.json")};
    if (!QFile::copy(testDataPath("fake-workers/bench-keeps-a-copy.sh"), bench.program)) return {};
    QFile(bench.program).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    qputenv("FAKE_BENCH_REPORT", laptopReport().toUtf8());
    qputenv("FAKE_BENCH_KEPT_COPY", bench.keptCopy.toUtf8());
    return bench;
}

QString serverReport() { return testDataPath("hardware/gpu-server-fer-cnn.json"); }

cnnstudio::HardwareInfo machineWith(int cores, int gpus) {
    cnnstudio::HardwareInfo hardware;
    hardware.cpuCores = cores;
    hardware.cpuName = "Test CPU";
    for (int i = 0; i < gpus; ++i) {
        cnnstudio::GpuInfo gpu;
        gpu.index = i;
        gpu.name = "Test GPU";
        hardware.gpus.push_back(gpu);
    }
    if (gpus == 0) hardware.gpuProblem = "no GPU in this test";
    return hardware;
}

// Runs a sweep of cpu-ref on one thread on `area`'s runner; false when it did not finish.
bool sweepOneCpuRefConfiguration(HardwareArea& area) {
    SweepPlan plan;
    plan.backends = {"cpu-ref"};
    plan.cpuThreads = {1};
    QSignalSpy finished(area.runner(), &BenchSweepRunner::finished);
    area.runner()->start(plan, machineWith(4, 0));
    return finished.wait(20000);
}

// The text of the speedup chart's bar with this label.
QString barText(const SpeedupChart* chart, const QString& label) {
    for (const SpeedupChart::DrawnBar& bar : chart->drawnBars())
        if (bar.label == label) return bar.valueText;
    return "(no bar " + label + ")";
}

}  // namespace

class HardwarePageTest : public QObject {
    Q_OBJECT

private slots:
    void plannerOffersWhatTheMachineHas() {
        SweepPlanner planner;
        planner.setHardware(machineWith(6, 0));
        QVERIFY(planner.hasHardware());
        // Thread counts double up to the cores, and the core count itself.
        for (int threads : {1, 2, 4, 6}) QVERIFY2(planner.threadBox(threads), qPrintable(QString::number(threads)));
        QVERIFY(!planner.threadBox(8));
        QVERIFY(!planner.gpuCountBox(1));  // no GPU, no GPU count to tick
        // A backend this build cannot run is shown disabled, with its reason.
        for (const std::string& name : cnnstudio::knownBackends()) {
            QCheckBox* box = planner.backendBox(QString::fromStdString(name));
            QVERIFY(box);
            QCOMPARE(box->isEnabled(), cnnstudio::backendUnavailableReason(name).empty());
        }
        planner.setHardware(machineWith(16, 2));
        for (int gpus : {1, 2}) QVERIFY(planner.gpuCountBox(gpus));
        QVERIFY(planner.threadBox(16));
    }

    // The Hardware page scrolls its planner: the wheel passes over a field that has no focus
    // instead of changing it (as on the Train settings).
    void plannerFieldsTakeTheWheelOnlyWithFocus() {
        SweepPlanner planner;
        planner.show();
        planner.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&planner));
        auto* batch = planner.findChild<QSpinBox*>("sweepBatch");
        QVERIFY(batch);
        const int before = batch->value();
        cnnstudio::ui::tests::wheelOneNotchDownOn(batch);
        QCOMPARE(batch->value(), before);
        batch->setFocus();
        QVERIFY(batch->hasFocus());
        cnnstudio::ui::tests::wheelOneNotchDownOn(batch);
        QCOMPARE(batch->value(), before - 1);
    }

    void tickingBoxesListsTheConfigurations() {
        SweepPlanner planner;
        planner.setHardware(machineWith(4, 0));
        SweepPlan plan;
        plan.backends = {"cpu-ref", "cpu"};
        plan.cpuThreads = {1};
        planner.setPlan(plan);
        QCOMPARE(planner.configurationList()->count(), 2);
        // Precisions are for the backends that train in more than fp32: here cpu, where the CPU has
        // bf16 instructions.
        QCOMPARE(planner.precisionBox("bf16")->isEnabled(), cnnstudio::backendTrainsIn("cpu", "bf16"));
        planner.threadBox(4)->setChecked(true);
        planner.threadBox(2)->setChecked(true);
        QStringList labels;
        for (int row = 0; row < planner.configurationList()->count(); ++row)
            labels << planner.configurationList()->item(row)->text();
        QCOMPARE(labels, QStringList({"cpu-ref 1 thread", "cpu 1 thread", "cpu 2 threads", "cpu 4 threads"}));
        QVERIFY(planner.runButton()->isEnabled());
        QCOMPARE(planner.plan().cpuThreads, QList<int>({1, 2, 4}));
        planner.backendBox("cpu-ref")->setChecked(false);
        planner.backendBox("cpu")->setChecked(false);
        QVERIFY(!planner.runButton()->isEnabled());
        QVERIFY(planner.problems().join(' ').contains("backend"));
    }

    // While a sweep runs its controls are locked, and the planner still shows what it measures
    // (audit item 5: it showed no configurations, "Tick at least one backend." and "Run 0").
    void runningSweepKeepsItsPlanOnShow() {
        SweepPlanner planner;
        planner.setHardware(machineWith(4, 0));
        SweepPlan plan;
        plan.backends = {"cpu-ref", "cpu"};
        plan.cpuThreads = {1, 2};
        planner.setPlan(plan);
        QCOMPARE(planner.configurationList()->count(), 3);
        const QString runText = planner.runButton()->text();

        planner.setRunning(true);
        QVERIFY(!planner.backendBox("cpu")->isEnabled());
        QCOMPARE(planner.plan().backends, plan.backends);
        QCOMPARE(planner.configurationList()->count(), 3);
        QVERIFY2(planner.problems().isEmpty(), qPrintable(planner.problems().join(' ')));
        QCOMPARE(planner.runButton()->text(), runText);
        QVERIFY(!planner.runButton()->isEnabled());

        planner.setRunning(false);
        QCOMPARE(planner.configurationList()->count(), 3);
        QVERIFY(planner.runButton()->isEnabled());
    }

    void planExpandsAndSaysWhatIsWrong() {
        SweepPlan plan;
        plan.backends = {"cpu-ref", "cpu", "cudnn"};
        plan.cpuThreads = {1, 16};
        plan.precisions = {"fp32", "bf16"};
        plan.gpuCounts = {1, 2};
        QStringList labels;
        for (const SweepConfiguration& configuration : plan.configurations()) labels << configuration.label();
        // Labelled as cnnstudio-bench labels them in its report; cpu in bf16 too where the CPU has
        // bf16 instructions, cpu-ref in fp32 only.
        QStringList expected{"cpu-ref 1 thread", "cpu 1 thread", "cpu 16 threads"};
        if (cnnstudio::backendTrainsIn("cpu", "bf16")) expected << "cpu bf16 1 thread" << "cpu bf16 16 threads";
        expected << "cudnn fp32" << "cudnn fp32, 2 GPUs" << "cudnn bf16" << "cudnn bf16, 2 GPUs";
        QCOMPARE(labels, expected);
        const QString problems = plan.problems(machineWith(4, 1)).join('\n');
        QVERIFY2(problems.contains("16 CPU threads is more than the 4 cores"), qPrintable(problems));
        QVERIFY2(problems.contains("2 GPUs is more than the 1"), qPrintable(problems));
        QVERIFY(plan.problems(machineWith(16, 2)).isEmpty());
        plan.nodes = 2;
        const QString hostfile = plan.problems(machineWith(16, 2)).join('\n');
        QVERIFY2(!hostfile.isEmpty(), "two nodes without a hostfile must be refused");
        SweepPlan cpuOnly;
        cpuOnly.nodes = 2;
        QVERIFY(cpuOnly.problems(machineWith(4, 0)).join(' ').contains("GPU backend"));
    }

    void planRunsOnlyThePrecisionsEachBackendTrainsIn() {
        SweepPlan plan;
        plan.backends = {"cuda", "cudnn"};
        plan.precisions = {"fp32", "tf32"};
        plan.gpuCounts = {1};
        QStringList labels;
        for (const SweepConfiguration& configuration : plan.configurations()) labels << configuration.label();
        QCOMPARE(labels, QStringList({"cuda fp32", "cudnn fp32", "cudnn tf32"}));  // cuda has no tf32
        QVERIFY(plan.problems(machineWith(16, 1)).isEmpty());
        plan.precisions = {"tf32"};
        const QString problems = plan.problems(machineWith(16, 1)).join('\n');
        QVERIFY2(problems.contains("The cuda backend trains in fp32 or bf16: tick one of those."), qPrintable(problems));
    }

    void benchArgumentsNameEverySetting() {
        SweepPlan plan;
        plan.model = "lenet5";
        plan.batch = 8;
        plan.steps = 2;
        plan.backends = {"cpu-ref", "cpu"};
        plan.cpuThreads = {4};
        QCOMPARE(plan.benchArguments("/tmp/r.json", {}),
                 QStringList({"--model", "lenet5", "--config", "cpu-ref threads=1 batch=8", "--config",
                              "cpu threads=4 batch=8", "--steps", "2", "--report", "/tmp/r.json", "--progress-events"}));
        plan.backends = {"cudnn"};
        plan.precisions = {"bf16"};
        plan.gpuCounts = {4};
        plan.nodes = 2;
        plan.steps = 0;
        QCOMPARE(plan.benchArguments("/tmp/r.json", "/tmp/hosts"),
                 QStringList({"--model", "lenet5", "--config", "cudnn bf16 gpus=4 nodes=2 batch=8", "--hostfile",
                              "/tmp/hosts", "--report", "/tmp/r.json", "--progress-events"}));
    }

    // Audit item 23: the Design page's network is in the network list, measured as the Train
    // page's run trains it (fer-cnn on Fashion-MNIST: 28×28 grey in, ten classes out), and the
    // benchmark is handed that network's spec file instead of a preset's name.
    void theDesignedNetworkIsSweptAsTheRunTrainsIt() {
        const cnnstudio::NetworkSpec drawn = cnnstudio::loadPreset("fer-cnn");
        const NetworkFit fit = fitNetworkToData(drawn, "fashion-mnist", fashionMnistShape());
        const DesignedNetwork designed = designedNetworkToSweep(drawn, cnnstudio::analyseSpec(drawn), fit);
        QVERIFY2(designed.problems.isEmpty(), qPrintable(designed.problems.join('\n')));
        QCOMPARE(designed.fittedTo, QString("Fashion-MNIST"));
        const cnnstudio::ShapeReport shapes = cnnstudio::analyseSpec(designed.spec);
        QCOMPARE(shapes.inputShape.height, 28);
        QCOMPARE(shapes.outputShape.countPerImage(), 10);
        QCOMPARE(shapes.totalParameters, std::int64_t(1737802));  // as the worker's log says of the run

        SweepPlanner planner;
        planner.setHardware(machineWith(4, 0));
        planner.setDesignedNetwork(designed);
        QCOMPARE(planner.plan().designed, std::nullopt);  // a preset until the user picks it
        planner.chooseDesignedNetwork();
        QCOMPARE(planner.networkChooser()->currentText(), QString("fer-cnn (Design page)"));
        const SweepPlan plan = planner.plan();
        QVERIFY(plan.designed);
        QCOMPARE(*plan.designed, designed);
        QCOMPARE(plan.networkName(), QString("fer-cnn"));
        QVERIFY2(planner.problems().isEmpty(), qPrintable(planner.problems().join('\n')));
        QVERIFY(planner.runButton()->isEnabled());
        QCOMPARE(plan.benchArguments("/tmp/r.json", {}, "/tmp/designed.json").mid(0, 2),
                 QStringList({"--model", "/tmp/designed.json"}));
        auto* note = planner.findChild<QLabel*>("sweepNetworkNote");
        QVERIFY2(note->text().contains("fer-cnn's input and classifier fitted to Fashion-MNIST"), qPrintable(note->text()));

        SweepPlan preset;
        preset.model = "lenet5";
        planner.setPlan(preset);  // back to a preset: the plan names it
        QCOMPARE(planner.plan().designed, std::nullopt);
        QCOMPARE(planner.plan().networkName(), QString("lenet5"));
    }

    // A designed network that cannot be measured is refused in words, with Run off: one with
    // problems of its own, and one the data set's fit refuses.
    void aDesignedNetworkWithProblemsIsRefused() {
        cnnstudio::NetworkSpec broken = cnnstudio::loadPreset("lenet5");
        for (cnnstudio::NodeSpec& node : broken.nodes)
            if (node.type == "Conv2D") node.params.erase("filters");
        const DesignedNetwork withProblems = designedNetworkToSweep(broken, cnnstudio::analyseSpec(broken), {});
        QCOMPARE(withProblems.problems.size(), qsizetype(1));
        QVERIFY2(withProblems.problems[0].startsWith("The Design page's network has 2 problems (layer '") &&
                     withProblems.problems[0].contains("Fix it there, or pick a preset."),
                 qPrintable(withProblems.problems[0]));

        SweepPlanner planner;
        planner.setHardware(machineWith(4, 0));
        planner.setDesignedNetwork(withProblems);
        planner.chooseDesignedNetwork();
        QVERIFY(planner.problems().contains(withProblems.problems[0]));
        QVERIFY(!planner.runButton()->isEnabled());
        QVERIFY(planner.findChild<QLabel*>("sweepProblems")->text().contains("Fix it there"));
        // The narrow column cuts the chosen entry; its tooltip names the network whole, and why
        // it cannot be measured.
        QVERIFY(planner.networkChooser()->currentText().startsWith("lenet5"));
        QVERIFY2(planner.networkChooser()->toolTip().contains("lenet5: the network on the Design page") &&
                     planner.networkChooser()->toolTip().contains("Fix it there"),
                 qPrintable(planner.networkChooser()->toolTip()));
        BenchSweepRunner runner;
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, runner.start(planner.plan(), machineWith(4, 0)));

        cnnstudio::NetworkSpec headless;
        headless.name = "headless";
        headless.nodes.push_back({"input", "Input", {{"channels", 1}, {"height", 28}, {"width", 28}}, {}});
        headless.nodes.push_back({"conv", "Conv2D", {{"filters", 8}, {"kernel", 3}, {"padding", 1}}, {"input"}});
        const DesignedNetwork unfit = designedNetworkToSweep(
            headless, cnnstudio::analyseSpec(headless), fitNetworkToData(headless, "fashion-mnist", fashionMnistShape()));
        QCOMPARE(unfit.problems.size(), qsizetype(1));
        QVERIFY2(unfit.problems[0].contains("classifier head"), qPrintable(unfit.problems[0]));

        const DesignedNetwork none = designedNetworkToSweep({}, {}, {});
        QVERIFY2(none.problems.join(' ').contains("no network"), qPrintable(none.problems.join(' ')));
    }

    // The report's header names the network with its input and classes, which tell a preset from
    // the Design page's copy of it fitted to another data set.
    void theReportHeaderNamesTheNetworkWithItsInputAndClasses() {
        HardwareArea area;
        QVERIFY(area.openReport(laptopReport(), true));
        const QString header = area.findChild<QLabel*>("reportSummary")->text();
        QVERIFY2(header.contains("fer-cnn (48×48 grey, 7 classes)"), qPrintable(header));
    }

    // The window hands the Hardware page the Design page's network as the Train page fits it.
    void theWindowOffersTheDesignedNetworkToTheSweep() {
        MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = testDataPath("runs");
        MainWindow window(options);
        QTRY_VERIFY_WITH_TIMEOUT(window.trainArea()->networkFit().known, 120000);
        SweepPlanner* planner = window.hardwareArea()->planner();
        planner->chooseDesignedNetwork();
        const SweepPlan plan = planner->plan();
        QVERIFY(plan.designed);
        QVERIFY(plan.designed->spec == window.trainArea()->networkFit().trainedSpec);
        QCOMPARE(plan.designed->fittedTo, QString("Fashion-MNIST"));
    }

    void openingAndOverlayingTwoReports() {
        HardwareArea area;
        QVERIFY(area.openReport(laptopReport(), true));
        QCOMPARE(int(area.comparison()->reports().size()), 1);
        QCOMPARE(area.speedupChart()->drawnBars().size(), 4);
        QCOMPARE(area.speedupChart()->drawnBars().first().label, QString("cpu-ref fp32, 1 thread"));

        QVERIFY(area.overlayReport(serverReport(), true));
        QCOMPARE(int(area.comparison()->reports().size()), 2);
        // Every successful configuration of both, named by machine; the failed one only in the table.
        const QList<SpeedupChart::DrawnBar> bars = area.speedupChart()->drawnBars();
        QCOMPARE(bars.size(), 4 + 6);
        QCOMPARE(bars.first().label, QString("laptop: cpu-ref fp32, 1 thread"));
        QCOMPARE(bars.last().label, QString("gpu-server: cudnn bf16, 2 GPUs"));
        QCOMPARE(area.resultsTable()->rowCount(), 4 + 7);
        // The overlaid machine's speedups are over the first report's baseline: 170000 / 12.5.
        QCOMPARE(barText(area.speedupChart(), "gpu-server: cudnn bf16, 2 GPUs"), QString("170 k images/s · 13600×"));
        QVERIFY(area.speedupChart()->title().contains("cpu-ref fp32, 1 thread (laptop)"));
        // Audit item 20: a colour means one machine on both charts, and their titles say so.
        QVERIFY(area.speedupChart()->title().contains("colour: machine"));
        QVERIFY(area.scalingChart()->title().contains("colour: machine"));
        QMap<QString, QColor> machineColour;
        for (int i = 0; i < area.speedupChart()->plot()->plottableCount(); ++i)
            if (auto* bars = qobject_cast<QCPBars*>(area.speedupChart()->plot()->plottable(i)))
                machineColour.insert(bars->name(), bars->brush().color());
        QCOMPARE(machineColour.keys(), QStringList({"gpu-server", "laptop"}));
        int linesChecked = 0;
        QCustomPlot* scaling = area.scalingChart()->plot();
        for (int i = 0; i < scaling->graphCount(); ++i) {
            const QString name = scaling->graph(i)->name();
            const QString machine = name.section(':', 0, 0);
            if (!scaling->graph(i)->visible() || !machineColour.contains(machine)) continue;
            QCOMPARE(scaling->graph(i)->pen().color(), machineColour.value(machine));
            ++linesChecked;
        }
        QVERIFY(linesChecked > 0);

        QVERIFY(!area.openReport(testDataPath("runs/20261130-014119-lenet5-adam/config.json"), true));
        QCOMPARE(int(area.comparison()->reports().size()), 2);  // a file that is no report changes nothing
        area.comparison()->setMachineLabel(1, "h200");
        QCOMPARE(area.speedupChart()->drawnBars().last().label, QString("h200: cudnn bf16, 2 GPUs"));
        area.comparison()->removeReport(0);
        QCOMPARE(area.speedupChart()->drawnBars().first().label, QString("cpu-ref fp32, 1 thread"));
    }

    // Cancelling a sweep before it measured anything leaves the comparison on show (audit item
    // 4: it was replaced by an empty report); a cancelled sweep that measured something shows it.
    void sweepCancelledBeforeAnyMeasurementKeepsTheResultsOnShow() {
        HardwareArea area;
        QVERIFY(area.openReport(laptopReport(), true));
        const QList<SpeedupChart::DrawnBar> barsBefore = area.speedupChart()->drawnBars();
        QSignalSpy messages(&area, &HardwareArea::message);

        cnnstudio::BenchReport cancelledReport;
        cancelledReport.machine.label = "this machine";
        for (const char* label : {"cpu-ref fp32, 1 thread", "cpu fp32, 1 thread"}) {
            cnnstudio::BenchConfiguration configuration;
            configuration.label = label;
            configuration.status = cnnstudio::BenchStatus::Cancelled;
            cancelledReport.configurations.push_back(configuration);
        }
        emit area.runner()->finished(cancelledReport, true);
        QCOMPARE(int(area.comparison()->reports().size()), 1);
        QCOMPARE(area.comparison()->reports().front().report.machine.label, std::string("laptop"));
        QCOMPARE(area.speedupChart()->drawnBars().size(), barsBefore.size());
        QCOMPARE(messages.size(), 1);
        QVERIFY2(messages.first().first().toString().contains("unchanged"), qPrintable(messages.first().first().toString()));

        cancelledReport.configurations.front().status = cnnstudio::BenchStatus::Ok;
        cancelledReport.configurations.front().trainImagesPerSecond.median = 20;
        emit area.runner()->finished(cancelledReport, true);
        QCOMPARE(int(area.comparison()->reports().size()), 1);
        QCOMPARE(area.comparison()->reports().front().report.machine.label, std::string("this machine"));
    }

    // Audit item 20: after a sweep, the header names the copy the benchmark kept instead of
    // saying "(not saved)" beside a status that says a copy is kept.
    void aFinishedSweepIsNamedByItsKeptCopy() {
        QTemporaryDir folder;
        const FakeBench bench = fakeBenchKeepingACopy(folder);
        QVERIFY(!bench.program.isEmpty());
        const QString& keptCopy = bench.keptCopy;
        HardwareArea area;
        area.runner()->setBenchProgram(bench.program);
        QSignalSpy messages(&area, &HardwareArea::message);
        QVERIFY(sweepOneCpuRefConfiguration(area));
        QCOMPARE(area.comparison()->reports().front().source, keptCopy);
        const QString header = area.findChild<QLabel*>("reportSummary")->text();
        QVERIFY2(!header.contains("not saved") && header.contains("2026-12-04T22-10-15Z-vm.json"), qPrintable(header));
        QVERIFY2(messages.last().first().toString().contains("A copy is kept as " + keptCopy),
                 qPrintable(messages.last().first().toString()));
    }

    // Audit item 18: after a sweep in a 1024x700 window, the summary under the Run button is
    // scrolled into view whole, and names the kept copy by its file name, not its long path.
    // Audit item 19: in a small window the choices scroll, with a scroll bar saying there is more,
    // and Run and Cancel stay in view below them.
    void runAndCancelAreInViewInASmallWindow() {
        HardwareArea area;
        area.resize(1024, 600);  // the page's room in a 1024x700 window
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        area.planner()->setHardware(machineWith(16, 0));
        for (QPushButton* button : {area.planner()->runButton(), area.planner()->cancelButton()})
            QTRY_COMPARE_WITH_TIMEOUT(button->visibleRegion().boundingRect().size(), button->size(), 2000);
        auto* choices = area.findChild<QScrollArea*>("sweepChoices");
        QVERIFY(choices);
        QVERIFY(choices->verticalScrollBar()->isVisible());
        QVERIFY(choices->verticalScrollBar()->maximum() > 0);
    }

    void theSweepSummaryIsInViewWholeInASmallWindow() {
        QTemporaryDir folder;
        const FakeBench bench = fakeBenchKeepingACopy(folder);
        QVERIFY(!bench.program.isEmpty());
        HardwareArea area;
        area.resize(1024, 640);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        area.runner()->setBenchProgram(bench.program);
        QVERIFY(sweepOneCpuRefConfiguration(area));
        QLabel* summary = area.planner()->statusLabel();
        QVERIFY2(summary->text().contains("2026-12-04T22-10-15Z-vm.json") && !summary->text().contains(folder.path()),
                 qPrintable(summary->text()));
        // Laid out for every line of the summary, and all of it inside the viewport.
        QTRY_VERIFY_WITH_TIMEOUT(summary->height() >= summary->heightForWidth(summary->width()) &&
                                     summary->visibleRegion().boundingRect().size() == summary->size(),
                                 2000);
    }

    // Rename machine… is for a report on show, renames the one chosen even when two share a
    // label, and the same report file cannot be overlaid twice (audit items 3 and 12).
    void renameMachineRenamesTheChosenReportAndTheSameFileIsNotOverlaidTwice() {
        HardwareArea area;
        auto* rename = area.findChild<QToolButton*>("renameMachine");
        QVERIFY(rename);
        QVERIFY(!rename->isEnabled());
        QVERIFY(area.openReport(serverReport(), true));
        QVERIFY(rename->isEnabled());
        QVERIFY(area.overlayReport(laptopReport(), true));

        QVERIFY(!area.overlayReport(serverReport(), true));
        QCOMPARE(int(area.comparison()->reports().size()), 2);
        try {
            area.comparison()->overlayReportFile(laptopReport());
            QFAIL("overlaying a report on show again should be refused");
        } catch (const cnnstudio::Error& error) {
            QVERIFY2(QString(error.what()).contains("already on show"), error.what());
        }

        // The same machine measured again, in another file: a second "gpu-server".
        QTemporaryDir folder;
        const QString secondServer = folder.filePath("gpu-server-again.json");
        QVERIFY(QFile::copy(serverReport(), secondServer));
        QVERIFY(area.overlayReport(secondServer, true));
        QCOMPARE(area.comparison()->machineLabel(0), area.comparison()->machineLabel(2));

        // Answers the report choice with the third entry, then the name with "server-B".
        QStringList offered;
        QTimer answerer;
        connect(&answerer, &QTimer::timeout, this, [&] {
            auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            if (!dialog || !dialog->isVisible()) return;
            if (dialog->comboBoxItems().isEmpty()) {
                dialog->setTextValue("server-B");
            } else {
                offered = dialog->comboBoxItems();
                dialog->setTextValue(offered.at(2));
            }
            dialog->accept();
        });
        answerer.start(10);
        rename->click();
        answerer.stop();
        QCOMPARE(offered.size(), 3);
        QCOMPARE(area.comparison()->machineLabel(2), QString("server-B"));
        QCOMPARE(area.comparison()->machineLabel(0), QString("gpu-server"));
    }

    // With ten configurations at the window's default size, the time chart's two-line bar labels
    // have their own rows and every chart's legend is inside its plot (audit item 14: labels ran
    // into each other and the legends were cut off at the bottom); the page scrolls instead.
    void chartsMakeRoomForEveryBarLabelAndTheirLegends() {
        HardwareArea area;
        area.resize(1400, 700);  // what the page gets of the window's default 1400x880
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        QVERIFY(area.openReport(serverReport(), true));
        QVERIFY(area.overlayReport(laptopReport(), true));
        QCoreApplication::processEvents();
        QCustomPlot* breakdown = area.timeBreakdownChart()->plot();
        breakdown->replot();
        const int bars = 10;
        const int labelHeight = 2 * QFontMetrics(breakdown->yAxis->tickLabelFont()).lineSpacing();
        QVERIFY2(breakdown->axisRect()->height() / bars >= labelHeight,
                 qPrintable(QString("%1 pixels for %2 bars of %3-pixel labels")
                                .arg(breakdown->axisRect()->height())
                                .arg(bars)
                                .arg(labelHeight)));
        for (BenchChart* chart : QList<BenchChart*>{area.speedupChart(), area.scalingChart(), area.timeBreakdownChart()}) {
            chart->plot()->replot();
            const QRect legend = chart->plot()->legend->outerRect();
            QVERIFY2(legend.bottom() <= chart->plot()->height(),
                     qPrintable(QString("%1: legend ends at %2, the plot at %3")
                                    .arg(chart->title())
                                    .arg(legend.bottom())
                                    .arg(chart->plot()->height())));
        }
    }

    void baselineSwitchChangesTheSpeedups() {
        HardwareArea area;
        QVERIFY(area.openReport(laptopReport(), true));
        const SpeedupChart* chart = area.speedupChart();
        // Default: cpu-ref on one thread, 12.5 images/s.
        QCOMPARE(barText(chart, "cpu-ref fp32, 1 thread"), QString("12.5 images/s · baseline"));
        QCOMPARE(barText(chart, "cpu fp32, 1 thread"), QString("150 images/s · 12.0×"));
        QCOMPARE(barText(chart, "cpu fp32, 4 threads"), QString("500 images/s · 40.0×"));

        // "best CPU": cpu on 4 threads, 500 images/s.
        QComboBox* baseline = area.baselineChooser();
        baseline->setCurrentIndex(baseline->findText("best CPU"));
        emit baseline->activated(baseline->currentIndex());
        QCOMPARE(barText(chart, "cpu fp32, 4 threads"), QString("500 images/s · baseline"));
        QCOMPARE(barText(chart, "cpu fp32, 2 threads"), QString("280 images/s · 0.56×"));
        QCOMPARE(barText(chart, "cpu-ref fp32, 1 thread"), QString("12.5 images/s · 0.025×"));
        QVERIFY(chart->title().contains("cpu fp32, 4 threads"));

        // Any configuration: cpu on 2 threads.
        baseline->setCurrentIndex(baseline->findText("cpu fp32, 2 threads"));
        emit baseline->activated(baseline->currentIndex());
        QCOMPARE(barText(chart, "cpu fp32, 4 threads"), QString("500 images/s · 1.79×"));
        QVERIFY(area.comparison()->baseline().kind == BaselineChoice::Kind::Configuration);
        QVERIFY(area.resultsTable()->findItems("1.79×", Qt::MatchExactly).size() == 1);
    }

    void chartNumbersEqualTheReport() {
        HardwareArea area;
        QVERIFY(area.openReport(serverReport(), true));
        const cnnstudio::BenchReport report = cnnstudio::loadBenchReport(serverReport().toStdString());
        // Every bar is its configuration's median, in report order.
        const QList<SpeedupChart::DrawnBar> bars = area.speedupChart()->drawnBars();
        int bar = 0;
        for (const cnnstudio::BenchConfiguration& configuration : report.configurations) {
            if (!configuration.ok()) continue;
            QCOMPARE(bars[bar].label, QString::fromStdString(configuration.label));
            QCOMPARE(bars[bar].imagesPerSecond, configuration.trainImagesPerSecond.median);
            ++bar;
        }
        QCOMPARE(bar, bars.size());

        // Scaling over GPUs: the one-rank throughput times two is ideal; 72000 / 80000 is 90%.
        QCOMPARE(area.scalingAxisChooser()->currentData().toInt(), int(ScalingAxis::Ranks));
        bool sawFp32 = false, sawBf16 = false;
        for (const ScalingChart::DrawnPoint& point : area.scalingChart()->drawnPoints()) {
            if (point.series == "cudnn fp32, batch 256" && point.count == 2) {
                QCOMPARE(point.imagesPerSecond, 72000.0);
                QCOMPARE(point.idealImagesPerSecond, 80000.0);
                QCOMPARE(point.efficiencyText, QString("90%"));
                sawFp32 = true;
            }
            if (point.series == "cudnn bf16, batch 256" && point.count == 2) {
                QCOMPARE(point.efficiencyText, QString("85%"));
                sawBf16 = true;
            }
        }
        QVERIFY(sawFp32 && sawBf16);

        // Where the time goes: each category's share of the step's total, communication included.
        const TimeBreakdownChart* breakdown = area.timeBreakdownChart();
        QVERIFY(breakdown->drawnCategories().contains("communication"));
        for (const cnnstudio::BenchConfiguration& configuration : report.configurations) {
            if (!configuration.ok()) continue;
            const QString label = QString::fromStdString(configuration.label);
            const double total = configuration.breakdownMs.totalMs();
            for (const auto& [category, ms] : configuration.breakdownMs.entries()) {
                const auto share = breakdown->drawnShare(label, QString::fromStdString(category));
                if (!breakdown->drawnCategories().contains(QString::fromStdString(category))) continue;
                QVERIFY2(share, qPrintable(label + " " + QString::fromStdString(category)));
                QVERIFY(qAbs(*share - 100 * ms / total) < 1e-9);
            }
        }
        QCOMPARE(breakdown->totalText("cudnn fp32, 2 GPUs"), QString("6.7 ms"));

        // The laptop's cpu backend scales over threads: 280 of an ideal 300 is 93%.
        QVERIFY(area.openReport(laptopReport(), true));
        QCOMPARE(area.scalingAxisChooser()->currentData().toInt(), int(ScalingAxis::CpuThreads));
        QStringList efficiencies;
        for (const ScalingChart::DrawnPoint& point : area.scalingChart()->drawnPoints()) efficiencies << point.efficiencyText;
        QCOMPARE(efficiencies, QStringList({"", "93%", "83%"}));
        QVERIFY(!breakdown->drawnCategories().contains("communication"));  // no time in it on one process
    }

    void csvExportHoldsEveryConfiguration() {
        HardwareArea area;
        QVERIFY(area.openReport(laptopReport(), true));
        QVERIFY(area.overlayReport(serverReport(), true));
        QTemporaryDir folder;
        const QString path = folder.filePath("comparison.csv");
        area.exportTable(path);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(file.readAll()).split("\r\n", Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + 4 + 7);
        QVERIFY2(lines[0].startsWith("machine,configuration,backend,precision,threads,batch per rank,ranks,nodes,status,"
                                     "train images/s,min images/s,max images/s,speedup (×),scaling efficiency (%),"
                                     "inference images/s,peak memory (bytes),steps,repeats,note"),
                 qPrintable(lines[0]));
        // Exact numbers, not the rounded ones of the screen.
        QVERIFY2(lines[1].startsWith("laptop,\"cpu-ref fp32, 1 thread\",cpu-ref,fp32,1,64,1,1,ok,12.5,12.25,12.75,1,,40,"
                                     "52428800,4,3,cpu-ref runs 2 steps: slow"),
                 qPrintable(lines[1]));
        QVERIFY2(lines[4].contains(",ok,500,480,520,40,"), qPrintable(lines[4]));
        QVERIFY2(lines[10].contains("\"cudnn bf16, 2 GPUs\"") && lines[10].contains(",13600,85,"), qPrintable(lines[10]));
        QVERIFY2(lines[11].contains(",failed,") && lines[11].endsWith("cuda tf32: out of memory (test fixture)"),
                 qPrintable(lines[11]));
        QVERIFY(!QFile::exists(path + ".tmp"));

        const QString png = folder.filePath("charts.png"), pdf = folder.filePath("charts.pdf");
        area.exportCharts(png);
        area.exportCharts(pdf);
        QImage image(png);
        QCOMPARE(image.height(), 3 * 520);
        QFile pdfFile(pdf);
        QVERIFY(pdfFile.open(QIODevice::ReadOnly));
        QVERIFY(pdfFile.read(5) == "%PDF-");
        QVERIFY_EXCEPTION_THROWN(area.exportTable(folder.filePath("no-such-folder/x.csv")), cnnstudio::Error);
    }

    void savedReportOpensAgainUnchanged() {
        HardwareComparison comparison;
        comparison.openReportFile(serverReport());
        comparison.setMachineLabel(0, "h200 box");
        QTemporaryDir folder;
        const QString path = folder.filePath("saved.json");
        comparison.saveReport(0, path);
        QCOMPARE(comparison.reports().front().source, path);
        HardwareComparison reopened;
        reopened.openReportFile(path);
        QCOMPARE(reopened.csv(), comparison.csv());
        QCOMPARE(QString::fromStdString(reopened.reports().front().report.machine.label), QString("h200 box"));
    }

    void trainingRunsShowTheirMeasuredThroughput() {
        // The recorded runs: lenet5 on cpu (2 threads) and on cpu-ref, both ended with a `finished` event.
        const QList<RunThroughput> runs = scanRunThroughputs(testDataPath("runs"));
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs[0].backend, QString("cpu"));
        QCOMPARE(runs[1].backend, QString("cpu-ref"));
        for (const RunThroughput& run : runs) {
            QCOMPARE(run.model, QString("lenet5"));
            // The median of the run's epoch events' images/s, read independently here.
            const cnnstudio::EventLog log = cnnstudio::readEvents((run.runDirectory + "/events.jsonl").toStdString());
            std::vector<double> epochs;
            for (const cnnstudio::Event& event : log.events)
                if (const auto* epoch = event.as<cnnstudio::EpochEvent>()) epochs.push_back(epoch->imagesPerSecond);
            std::sort(epochs.begin(), epochs.end());
            const std::size_t middle = epochs.size() / 2;
            const double expected = epochs.size() % 2 ? epochs[middle] : (epochs[middle - 1] + epochs[middle]) / 2;
            QCOMPARE(run.imagesPerSecond, expected);
            QCOMPARE(run.epochs, int(epochs.size()));
        }
        // Two backends, two groups, fastest first, each its run's median.
        const QList<RunThroughputGroup> groups = groupRunThroughputs(runs);
        QCOMPARE(groups.size(), 2);
        QVERIFY(groups[0].medianImagesPerSecond >= groups[1].medianImagesPerSecond);
        QStringList labels;
        for (const RunThroughputGroup& group : groups) {
            QCOMPARE(group.runs, 1);
            labels << group.label;
            QVERIFY(std::ranges::any_of(runs, [&](const RunThroughput& run) {
                return run.imagesPerSecond == group.medianImagesPerSecond;
            }));
        }
        labels.sort();
        QCOMPARE(labels, QStringList({"lenet5 · cpu fp32, 2 threads · AMD EPYC", "lenet5 · cpu-ref fp32 · AMD EPYC"}));

        HardwareArea area;
        area.setRunsRoot(testDataPath("runs"));
        QTRY_VERIFY_WITH_TIMEOUT(!area.isScanningRuns(), 20000);
        QCOMPARE(area.runThroughputChart()->groups().size(), 2);
        QVERIFY2(area.runThroughputChart()->drawnLabels().first().endsWith("(1 run)"),
                 qPrintable(area.runThroughputChart()->drawnLabels().first()));
        QVERIFY(!measuredRunThroughput(testDataPath("hardware")));  // not a run folder
    }

    void windowHasAHardwarePage() {
        MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = testDataPath("runs");
        options.hardwareReports = {laptopReport(), serverReport()};
        MainWindow window(options);
        window.showArea(MainWindow::Area::Hardware);
        auto* areas = window.findChild<QTabWidget*>("areas");
        QCOMPARE(areas->currentWidget(), static_cast<QWidget*>(window.hardwareArea()));
        QCOMPARE(int(window.hardwareArea()->comparison()->reports().size()), 2);
    }
};

CNNSTUDIO_GUI_TEST(HardwarePageTest);
#include "hardware_page_test.moc"
