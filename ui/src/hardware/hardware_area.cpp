#include "cnnstudio/ui/hardware/hardware_area.h"

#include <utility>

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/hardware/bench_results_table.h"
#include "cnnstudio/ui/hardware/bench_sweep_runner.h"
#include "cnnstudio/ui/hardware/run_throughput_chart.h"
#include "cnnstudio/ui/hardware/scaling_chart.h"
#include "cnnstudio/ui/hardware/speedup_chart.h"
#include "cnnstudio/ui/hardware/sweep_planner.h"
#include "cnnstudio/ui/hardware/time_breakdown_chart.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/training/network_fit.h"

namespace cnnstudio::ui {
namespace {

constexpr int plannerWidth = 300;
const QString reportFilter = QObject::tr("Benchmark reports (*.json)");

QToolButton* toolButton(const QString& text, const QString& name, QWidget* parent) {
    auto* button = new QToolButton(parent);
    button->setText(text);
    button->setObjectName(name);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);
    button->setAutoRaise(true);
    return button;
}

// "fer-cnn (28×28 grey, 10 classes)": the name alone does not tell a preset from the Design
// page's copy of it fitted to another data set.
QString networkText(const BenchNetwork& network) {
    QString text = QString::fromStdString(network.name);
    if (network.input.size() == 3 && network.classes > 0)
        text += QStringLiteral(" (%1, %2)")
                    .arg(imageSizeText(network.input[0], network.input[1], network.input[2]),
                         countOf(network.classes, QObject::tr("class"), QObject::tr("classes")));
    return text;
}

QString describe(const ShownReport& shown) {
    const BenchReport& report = shown.report;
    QString text = QObject::tr("<b>%1</b> — %2, %3")
                       .arg(QString::fromStdString(report.machine.label).toHtmlEscaped(),
                            QString::fromStdString(report.machine.cpuModel).toHtmlEscaped(),
                            networkText(report.network).toHtmlEscaped());
    if (!report.machine.gpus.empty())
        text += QObject::tr(", %1 × %2").arg(report.machine.gpus.size()).arg(QString::fromStdString(report.machine.gpus[0].name).toHtmlEscaped());
    text += QObject::tr(", measured %1").arg(QString::fromStdString(report.created).toHtmlEscaped());
    text += shown.source.isEmpty() ? QObject::tr(" (not saved)") : QStringLiteral(" (%1)").arg(QFileInfo(shown.source).fileName().toHtmlEscaped());
    return text;
}

}  // namespace

HardwareArea::HardwareArea(QWidget* parent)
    : QWidget(parent), reportFolder_(QString::fromStdString(hardwareReportFolder().string())) {
    setObjectName("hardwareArea");
    comparison_ = new HardwareComparison(this);
    runner_ = new BenchSweepRunner(this);
    planner_ = new SweepPlanner(this);
    speedup_ = new SpeedupChart(this);
    scaling_ = new ScalingChart(this);
    breakdown_ = new TimeBreakdownChart(this);
    table_ = new BenchResultsTable(comparison_, this);
    runs_ = new RunThroughputChart(this);

    planner_->setMinimumWidth(plannerWidth);
    planner_->setMaximumWidth(plannerWidth + 80);

    summary_ = new QLabel(this);
    summary_->setObjectName("reportSummary");
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);

    auto* lower = new QSplitter(Qt::Horizontal, this);
    lower->addWidget(scaling_);
    lower->addWidget(breakdown_);
    // The breakdown's bar labels (configuration and step time) take half its width: it gets more.
    lower->setStretchFactor(0, 5);
    lower->setStretchFactor(1, 6);
    auto* charts = new QSplitter(Qt::Vertical, this);
    charts->setObjectName("hardwareCharts");
    charts->addWidget(speedup_);
    charts->addWidget(lower);
    charts->setStretchFactor(0, 1);
    charts->setStretchFactor(1, 1);
    // 680 wide fits beside the planner at 1024x700. The height is what the charts ask for (their
    // bars' labels and legends): in a smaller window the charts scroll.
    charts->setMinimumWidth(680);
    auto* chartsScroll = new QScrollArea(this);
    chartsScroll->setWidgetResizable(true);
    chartsScroll->setFrameShape(QFrame::NoFrame);
    chartsScroll->setWidget(charts);
    views_ = new QTabWidget(this);
    views_->setObjectName("hardwareViews");
    views_->setDocumentMode(true);
    views_->addTab(chartsScroll, tr("Charts"));
    views_->addTab(table_, tr("Numbers"));
    views_->addTab(runs_, tr("Training runs"));

    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(createToolRow());
    rightLayout->addWidget(summary_);
    rightLayout->addWidget(views_, 1);

    auto* layout = new QHBoxLayout(this);
    layout->addWidget(planner_);
    layout->addWidget(right, 1);

    connect(comparison_, &HardwareComparison::changed, this, &HardwareArea::refreshViews);
    connect(planner_, &SweepPlanner::runRequested, this, &HardwareArea::runSweep);
    connect(planner_, &SweepPlanner::cancelRequested, this, &HardwareArea::cancelSweep);
    connect(runner_, &BenchSweepRunner::progress, planner_, &SweepPlanner::showProgress);
    connect(runner_, &BenchSweepRunner::finished, this, &HardwareArea::sweepEnded);
    refreshViews();
}

QWidget* HardwareArea::createToolRow() {
    auto* row = new QWidget(this);
    auto* layout = new QVBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);

    auto* open = toolButton(tr("Open report…"), "openReport", row);
    open->setToolTip(tr("Show a saved benchmark report (replacing the reports on show)"));
    connect(open, &QToolButton::clicked, this, [this] { chooseReportToOpen(false); });
    auto* overlay = toolButton(tr("Overlay report…"), "overlayReport", row);
    overlay->setToolTip(tr("Add another machine's report beside the ones on show"));
    connect(overlay, &QToolButton::clicked, this, [this] { chooseReportToOpen(true); });
    saveButton_ = toolButton(tr("Save report…"), "saveReport", row);
    saveButton_->setToolTip(tr("Save the first report on show as JSON"));
    connect(saveButton_, &QToolButton::clicked, this, &HardwareArea::chooseReportFile);
    renameButton_ = toolButton(tr("Rename machine…"), "renameMachine", row);
    renameButton_->setToolTip(tr("The short name of a report's machine in legends and bar labels"));
    connect(renameButton_, &QToolButton::clicked, this, &HardwareArea::renameMachine);
    exportButton_ = toolButton(tr("Export"), "exportHardware", row);
    exportButton_->setPopupMode(QToolButton::InstantPopup);
    auto* exportMenu = new QMenu(exportButton_);
    exportMenu->addAction(tr("Charts as PNG or PDF…"), this, &HardwareArea::chooseChartsFile);
    exportMenu->addAction(tr("Numbers as CSV…"), this, &HardwareArea::chooseTableFile);
    exportButton_->setMenu(exportMenu);

    baseline_ = new QComboBox(row);
    baseline_->setObjectName("baseline");
    baseline_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    baseline_->setMinimumContentsLength(18);
    baseline_->setToolTip(tr("What the speedups are over"));
    connect(baseline_, &QComboBox::activated, this, [this] {
        const QVariantList data = baseline_->currentData().toList();
        if (data.size() != 3) return;
        comparison_->setBaseline({BaselineChoice::Kind(data[0].toInt()), data[1].toInt(), data[2].toString()});
    });
    scalingAxis_ = new QComboBox(row);
    scalingAxis_->setObjectName("scalingAxis");
    scalingAxis_->addItem(tr("GPUs and nodes"), int(ScalingAxis::Ranks));
    scalingAxis_->addItem(tr("CPU threads"), int(ScalingAxis::CpuThreads));
    connect(scalingAxis_, &QComboBox::activated, this, &HardwareArea::refreshViews);

    // Two lines, so that the page fits a 1024-pixel window beside the planner.
    auto* files = new QHBoxLayout;
    for (QWidget* widget : QList<QWidget*>{open, overlay, saveButton_, renameButton_, exportButton_}) files->addWidget(widget);
    files->addStretch();
    auto* choices = new QHBoxLayout;
    choices->addWidget(new QLabel(tr("Speedup over"), row));
    choices->addWidget(baseline_, 2);
    choices->addSpacing(12);
    choices->addWidget(new QLabel(tr("Scaling over"), row));
    choices->addWidget(scalingAxis_, 1);
    choices->addStretch();
    layout->addLayout(files);
    layout->addLayout(choices);
    return row;
}

void HardwareArea::refreshBaselineChoices() {
    QSignalBlocker block(baseline_);
    baseline_->clear();
    auto add = [this](const QString& text, const BaselineChoice& choice) {
        baseline_->addItem(text, QVariantList{int(choice.kind), choice.reportIndex, choice.label});
    };
    add(tr("cpu-ref, 1 thread (naive)"), {BaselineChoice::Kind::CpuRefOneThread, 0, {}});
    add(tr("best CPU"), {BaselineChoice::Kind::BestCpu, 0, {}});
    for (const ComparedConfiguration& configuration : comparison_->comparedConfigurations())
        add(configuration.barLabel, {BaselineChoice::Kind::Configuration, configuration.reportIndex,
                                     QString::fromStdString(configuration.configuration.label)});
    const BaselineChoice current = comparison_->baseline();
    for (int row = 0; row < baseline_->count(); ++row) {
        const QVariantList data = baseline_->itemData(row).toList();
        if (BaselineChoice{BaselineChoice::Kind(data[0].toInt()), data[1].toInt(), data[2].toString()} == current ||
            (current.kind != BaselineChoice::Kind::Configuration && data[0].toInt() == int(current.kind))) {
            baseline_->setCurrentIndex(row);
            break;
        }
    }
}

void HardwareArea::refreshViews() {
    const std::vector<ComparedConfiguration> compared = comparison_->comparedConfigurations();
    const bool overlaid = comparison_->reports().size() > 1;
    refreshBaselineChoices();
    if (comparison_->isEmpty()) {
        summary_->setText(tr("No report on show. Run a sweep on the left, or open a saved report — overlay more to "
                             "put machines side by side."));
        for (BenchChart* chart : QList<BenchChart*>{speedup_, scaling_, breakdown_})
            chart->showEmptyNote(tr("Run a sweep or open a report."));
    } else {
        QStringList lines;
        for (const ShownReport& shown : comparison_->reports()) lines << describe(shown);
        summary_->setText(lines.join("<br>"));
    }
    if (!comparison_->isEmpty()) {
        speedup_->setData(compared, comparison_->baselineConfiguration(), comparison_->baselineName(), overlaid);
        breakdown_->setData(compared);
        scaling_->setData(comparison_->scalingSeries(ScalingAxis(scalingAxis_->currentData().toInt())),
                          ScalingAxis(scalingAxis_->currentData().toInt()), overlaid);
    }
    table_->refresh();
    saveButton_->setEnabled(!comparison_->isEmpty());
    exportButton_->setEnabled(!comparison_->isEmpty());
    renameButton_->setEnabled(!comparison_->isEmpty());
}

bool HardwareArea::openReport(const QString& path, bool quiet) {
    try {
        comparison_->openReportFile(path);
    } catch (const std::exception& error) {
        if (!quiet) showError(tr("Open report"), QString::fromUtf8(error.what()));
        return false;
    }
    // The axis that has something to show: ranks when the report scales over GPUs, else threads.
    const bool ranks = !comparison_->scalingSeries(ScalingAxis::Ranks).empty();
    scalingAxis_->setCurrentIndex(scalingAxis_->findData(int(ranks ? ScalingAxis::Ranks : ScalingAxis::CpuThreads)));
    refreshViews();
    emit message(tr("Opened %1").arg(path));
    return true;
}

bool HardwareArea::overlayReport(const QString& path, bool quiet) {
    try {
        comparison_->overlayReportFile(path);
    } catch (const std::exception& error) {
        if (!quiet) showError(tr("Overlay report"), QString::fromUtf8(error.what()));
        return false;
    }
    emit message(tr("Overlaid %1").arg(path));
    return true;
}

void HardwareArea::chooseReportToOpen(bool overlay) {
    const QString path = QFileDialog::getOpenFileName(this, overlay ? tr("Overlay a benchmark report") : tr("Open a benchmark report"),
                                                      reportFolder_, reportFilter);
    if (path.isEmpty()) return;
    if (overlay) overlayReport(path);
    else openReport(path);
}

void HardwareArea::chooseReportFile() {
    if (comparison_->isEmpty()) return;
    const BenchReport& report = comparison_->reports().front().report;
    const QString suggested = QString::fromStdString(report.machine.label + "-" + report.network.name) + ".json";
    QString path = QFileDialog::getSaveFileName(this, tr("Save the benchmark report"), suggested, reportFilter);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += ".json";
    try {
        comparison_->saveReport(0, path);
        emit message(tr("Saved the report to %1").arg(path));
    } catch (const std::exception& error) {
        showError(tr("Save report"), QString::fromUtf8(error.what()));
    }
}

void HardwareArea::exportCharts(const QString& path) {
    BenchChart::exportCharts({speedup_, scaling_, breakdown_}, path);
}

void HardwareArea::exportTable(const QString& path) { comparison_->exportCsv(path); }

void HardwareArea::chooseChartsFile() {
    QString path = QFileDialog::getSaveFileName(this, tr("Export the speedup, scaling and time charts to one file"),
                                                "hardware-comparison.png", tr("PNG images (*.png);;PDF documents (*.pdf)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += ".png";
    try {
        exportCharts(path);
        emit message(tr("Wrote the charts to %1").arg(path));
    } catch (const std::exception& error) {
        showError(tr("Export charts"), QString::fromUtf8(error.what()));
    }
}

void HardwareArea::chooseTableFile() {
    QString path = QFileDialog::getSaveFileName(this, tr("Export the numbers"), "hardware-comparison.csv", tr("CSV tables (*.csv)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += ".csv";
    try {
        exportTable(path);
        emit message(tr("Wrote the numbers to %1").arg(path));
    } catch (const std::exception& error) {
        showError(tr("Export numbers"), QString::fromUtf8(error.what()));
    }
}

void HardwareArea::renameMachine() {
    if (comparison_->isEmpty()) return;
    int index = 0;
    if (comparison_->reports().size() > 1) {
        // QInputDialog answers with the text chosen, so each report's entry is made unique by its
        // place: two reports may carry the same machine label.
        QStringList entries;
        for (int i = 0; i < int(comparison_->reports().size()); ++i) {
            const QString& source = comparison_->reports()[std::size_t(i)].source;
            entries << tr("%1. %2 (%3)").arg(i + 1).arg(comparison_->machineLabel(i),
                                                       source.isEmpty() ? tr("not saved") : QFileInfo(source).fileName());
        }
        bool chosen = false;
        const QString entry = QInputDialog::getItem(this, tr("Rename machine"), tr("Report"), entries, 0, false, &chosen);
        if (!chosen) return;
        index = int(entries.indexOf(entry));
    }
    bool accepted = false;
    const QString current = comparison_->machineLabel(index);
    const QString label = QInputDialog::getText(this, tr("Rename machine"), tr("Short name in legends and bar labels"),
                                                QLineEdit::Normal, current, &accepted);
    if (accepted) comparison_->setMachineLabel(index, label);
}

void HardwareArea::runSweep() {
    // Running before the start: a benchmark that cannot start at all ends the sweep within start().
    const SweepPlan plan = planner_->plan();
    planner_->setRunning(true);
    try {
        runner_->start(plan, planner_->hardware());
    } catch (const Error& error) {
        planner_->setRunning(false);
        showError(tr("Run sweep"), QString::fromStdString(error.what()));
        return;
    }
    if (runner_->isRunning())
        emit message(tr("Measuring %1 with cnnstudio-bench").arg(countOf(runner_->configurationCount(), tr("configuration"), tr("configurations"))));
}

void HardwareArea::cancelSweep() { runner_->cancel(); }

void HardwareArea::sweepEnded(const BenchReport& report, bool cancelled) {
    planner_->setRunning(false);
    int ok = 0, failed = 0;
    for (const BenchConfiguration& configuration : report.configurations) {
        ok += configuration.ok();
        failed += configuration.status == BenchStatus::Failed;
    }
    if (cancelled && ok == 0 && failed == 0) {
        // A report of nothing but cancelled configurations has nothing to show; the comparison on
        // show (a finished sweep, an opened report) is worth more.
        const QString summary = tr("Cancelled before any configuration was measured; the results on show are unchanged.");
        planner_->showSweepEnded(summary);
        emit message(summary);
        return;
    }
    QString summary = cancelled ? tr("Cancelled: %1 measured.").arg(countOf(ok, tr("configuration"), tr("configurations")))
                                : tr("Done: %1 measured.").arg(countOf(ok, tr("configuration"), tr("configurations")));
    if (failed > 0) summary += ' ' + tr("%1 failed (see the Numbers tab).").arg(failed);
    // The kept copy is this report's file: the header names it rather than saying "not saved".
    comparison_->showReport(report, runner_->savedCopy());
    const bool ranks = !comparison_->scalingSeries(ScalingAxis::Ranks).empty();
    scalingAxis_->setCurrentIndex(scalingAxis_->findData(int(ranks ? ScalingAxis::Ranks : ScalingAxis::CpuThreads)));
    refreshViews();
    // cnnstudio-bench keeps a copy of a finished sweep in the hardware folder itself, where the
    // Train page's predicted run time finds this machine's latest report.
    // The planner's narrow column names the file; the status bar (and its tooltip) the whole path.
    const QString keptCopy = runner_->savedCopy();
    planner_->showSweepEnded(keptCopy.isEmpty() ? summary
                                                : summary + ' ' + tr("A copy is kept in the hardware folder as %1.")
                                                                      .arg(QFileInfo(keptCopy).fileName()));
    emit message(keptCopy.isEmpty() ? summary : summary + ' ' + tr("A copy is kept as %1.").arg(keptCopy));
}

void HardwareArea::setRunsRoot(const QString& runsRoot) {
    runsRoot_ = runsRoot;
    refreshRuns();
}

void HardwareArea::refreshRuns() {
    if (runsRoot_.isEmpty()) return;
    if (scanningRuns_) {
        rescanWanted_ = true;
        return;
    }
    scanningRuns_ = true;
    auto* watcher = new QFutureWatcher<QList<RunThroughput>>(this);
    const QString root = runsRoot_;
    connect(watcher, &QFutureWatcher<QList<RunThroughput>>::finished, this, [this, watcher, root] {
        runs_->setGroups(groupRunThroughputs(watcher->result()), root);
        watcher->deleteLater();
        scanningRuns_ = false;
        if (std::exchange(rescanWanted_, false)) refreshRuns();
    });
    watcher->setFuture(QtConcurrent::run([root] { return scanRunThroughputs(root); }));
}

void HardwareArea::showError(const QString& title, const QString& text) { QMessageBox::warning(this, title, text); }

}  // namespace cnnstudio::ui
