#include "cnnstudio/ui/training/training_dashboard.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/common/plot_export.h"
#include "cnnstudio/ui/common/plot_legend.h"
#include "cnnstudio/ui/training/confusion_matrix_plot.h"
#include "cnnstudio/ui/training/run_time_estimate.h"
#include "cnnstudio/ui/training/training_run.h"
#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

constexpr int replotIntervalMs = 100;  // at most ten redraws a second
constexpr int exportWidth = 1000, exportPlotHeight = 560;

QCustomPlot* makePlot(const QString& yLabel, QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumSize(240, 150);
    plot->xAxis->setLabel(QObject::tr("epoch"));
    plot->yAxis->setLabel(yLabel);
    // The legend gets a row of its own under the axes, so it can never hide a curve.
    plot->legend->setVisible(true);
    plot->plotLayout()->addElement(1, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setMargins(QMargins(4, 0, 4, 2));
    plot->legend->setRowSpacing(0);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setNoAntialiasingOnDrag(true);
    return plot;
}

QCPGraph* addCurve(QCustomPlot* plot, const QString& name, bool scatter) {
    QCPGraph* graph = plot->addGraph();
    graph->setName(name);
    if (scatter) graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    return graph;
}

void styleCurve(QCPGraph* graph, const QColor& color, double width, Qt::PenStyle line) {
    if (!graph) return;
    graph->setPen(QPen(color, width, line));
    QCPScatterStyle scatter = graph->scatterStyle();
    if (scatter.shape() != QCPScatterStyle::ssNone) {
        scatter.setPen(QPen(color, 1.5));
        scatter.setBrush(color);
        graph->setScatterStyle(scatter);
    }
}

// The run's points into its curves (StepLoss may be null: compared runs show epochs only).
void fillCurves(const TrainingRun* run, const std::array<QCPGraph*, 5>& curves) {
    QVector<double> stepX, stepLoss, epochX, trainLoss, trainAccuracy, validationX, validationLoss, validationAccuracy;
    if (run) {
        for (const StepPoint& point : run->steps()) {
            stepX << point.epochPosition;
            stepLoss << point.loss;
        }
        for (const EpochPoint& point : run->epochs()) {
            epochX << point.epoch;
            trainLoss << point.trainLoss;
            trainAccuracy << point.trainAccuracy * 100.0;
            if (point.validationLoss && point.validationAccuracy) {
                validationX << point.epoch;
                validationLoss << *point.validationLoss;
                validationAccuracy << *point.validationAccuracy * 100.0;
            }
        }
    }
    if (curves[0]) curves[0]->setData(stepX, stepLoss, true);
    curves[1]->setData(epochX, trainLoss, true);
    curves[2]->setData(validationX, validationLoss, true);
    curves[3]->setData(epochX, trainAccuracy, true);
    curves[4]->setData(validationX, validationAccuracy, true);
}

// How a compared run is named in legends: its folder's name, which holds the time it started.
QString runLabel(const TrainingRun* run) { return run->displayName().isEmpty() ? QObject::tr("run") : run->displayName(); }

}  // namespace

TrainingDashboard::TrainingDashboard(QWidget* parent) : QWidget(parent) {
    replotTimer_ = new QTimer(this);
    replotTimer_->setSingleShot(true);
    replotTimer_->setInterval(replotIntervalMs);
    connect(replotTimer_, &QTimer::timeout, this, [this] {
        refreshCurves();
        refreshStatus();
    });

    status_ = new QLabel(this);
    status_->setObjectName("runStatus");
    status_->setWordWrap(true);
    QFont statusFont = status_->font();
    statusFont.setBold(true);
    status_->setFont(statusFont);
    stop_ = new QPushButton(tr("Stop"), this);
    stop_->setObjectName("stopButton");
    stop_->setToolTip(tr("Finish the current step, write a checkpoint and stop (the run can be resumed)"));
    kill_ = new QPushButton(tr("Kill"), this);
    kill_->setObjectName("killButton");
    kill_->setToolTip(tr("End the worker at once; progress since the last checkpoint is lost"));
    resume_ = new QPushButton(tr("Resume"), this);
    resume_->setObjectName("resumeButton");
    resume_->setToolTip(tr("Continue this run from its last checkpoint"));
    progress_ = new QProgressBar(this);
    progress_->setObjectName("runProgress");
    progress_->setTextVisible(true);
    throughput_ = new QLabel(this);
    throughput_->setObjectName("throughput");
    learningRate_ = new QLabel(this);
    learningRate_->setObjectName("learningRate");
    best_ = new QLabel(this);
    best_->setObjectName("bestAccuracy");
    best_->setWordWrap(true);
    comparisonNote_ = new QLabel(this);
    comparisonNote_->setObjectName("comparisonNote");
    comparisonNote_->setWordWrap(true);
    comparisonNote_->hide();

    failureBox_ = new QWidget(this);
    failureReason_ = new QLabel(failureBox_);
    failureReason_->setObjectName("failureReason");
    failureReason_->setWordWrap(true);
    failureReason_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    failureLog_ = new QPlainTextEdit(failureBox_);
    failureLog_->setObjectName("failureLog");
    failureLog_->setReadOnly(true);
    failureLog_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    failureLog_->setMaximumHeight(130);
    auto* failureLayout = new QVBoxLayout(failureBox_);
    failureLayout->setContentsMargins(0, 0, 0, 0);
    failureLayout->addWidget(failureReason_);
    failureLayout->addWidget(failureLog_);
    failureBox_->hide();

    lossPlot_ = makePlot(tr("loss"), this);
    lossPlot_->setObjectName("lossPlot");
    accuracyPlot_ = makePlot(tr("accuracy (%)"), this);
    accuracyPlot_->setObjectName("accuracyPlot");
    // The legends' rows follow the plots' widths.
    lossPlot_->installEventFilter(this);
    accuracyPlot_->installEventFilter(this);
    mainCurves_ = {addCurve(lossPlot_, tr("train loss (steps)"), false), addCurve(lossPlot_, tr("train loss"), true),
                   addCurve(lossPlot_, tr("validation loss"), true), addCurve(accuracyPlot_, tr("train accuracy"), true),
                   addCurve(accuracyPlot_, tr("validation accuracy"), true)};

    matrixTitle_ = new QLabel(tr("Validation confusion matrix"), this);
    normalised_ = new QCheckBox(tr("Row-normalised (recall)"), this);
    normalised_->setObjectName("normalisedToggle");
    matrix_ = new ConfusionMatrixPlot(this);
    matrix_->setObjectName("confusionMatrix");
    connect(normalised_, &QCheckBox::toggled, matrix_, &ConfusionMatrixPlot::setNormalised);

    // One Export button with a menu keeps the figures row narrow enough for a 1024-pixel window.
    auto* exportButton = new QPushButton(tr("Export"), this);
    exportButton->setObjectName("exportButton");
    auto* exportMenu = new QMenu(exportButton);
    exportMenu->addAction(tr("Plots as one PNG or PDF…"), this, &TrainingDashboard::chooseExportFile)
        ->setStatusTip(tr("The loss plot above the accuracy plot, in one file"));
    exportMenu->addAction(tr("Per-epoch metrics as CSV…"), this, &TrainingDashboard::chooseCsvFile);
    exportButton->setMenu(exportMenu);
    connect(stop_, &QPushButton::clicked, this, &TrainingDashboard::stopRequested);
    connect(kill_, &QPushButton::clicked, this, &TrainingDashboard::killRequested);
    connect(resume_, &QPushButton::clicked, this, &TrainingDashboard::resumeRequested);

    auto* header = new QHBoxLayout;
    header->addWidget(status_, 1);
    header->addWidget(stop_);
    header->addWidget(resume_);
    header->addWidget(kill_);
    auto* figures = new QHBoxLayout;
    figures->addWidget(throughput_);
    figures->addSpacing(16);
    figures->addWidget(learningRate_);
    figures->addSpacing(16);
    figures->addWidget(best_);
    figures->addStretch(1);
    figures->addWidget(exportButton);

    auto* plots = new QSplitter(Qt::Vertical, this);
    plots->addWidget(lossPlot_);
    plots->addWidget(accuracyPlot_);
    matrixPane_ = new QWidget(this);
    auto* matrixLayout = new QVBoxLayout(matrixPane_);
    matrixLayout->setContentsMargins(0, 0, 0, 0);
    matrixTitle_->setWordWrap(true);
    matrixLayout->addWidget(matrixTitle_);
    matrixLayout->addWidget(normalised_);
    matrixLayout->addWidget(matrix_, 1);
    auto* body = new QSplitter(Qt::Horizontal, this);
    body->addWidget(plots);
    body->addWidget(matrixPane_);
    body->setStretchFactor(0, 1);
    body->setStretchFactor(1, 1);
    body->setSizes({500, 500});
    body->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(progress_);
    layout->addLayout(figures);
    layout->addWidget(comparisonNote_);
    layout->addWidget(failureBox_);
    layout->addWidget(body, 1);

    applyPalette();
    setRunControlsVisible(false);
    refreshNow();
}

QCPGraph* TrainingDashboard::curve(Curve which) const { return mainCurves_[std::size_t(which)]; }

QCPGraph* TrainingDashboard::comparisonCurve(int index, Curve which) const {
    if (index < 0 || index >= compared_.size()) return nullptr;
    return compared_[index].curves[std::size_t(which)];
}

void TrainingDashboard::setRun(TrainingRun* run) {
    if (run_) run_->disconnect(this);
    run_ = run;
    if (run_) {
        for (auto signal : {&TrainingRun::stepAdded, &TrainingRun::started, &TrainingRun::ended})
            connect(run_, signal, this, &TrainingDashboard::scheduleRefresh);
        connect(run_, &TrainingRun::epochAdded, this, [this] {
            refreshMatrix();
            scheduleRefresh();
        });
        connect(run_, &TrainingRun::cleared, this, &TrainingDashboard::refreshNow);
        connect(run_, &TrainingRun::reloaded, this, &TrainingDashboard::refreshNow);
        connect(run_, &QObject::destroyed, this, [this] {
            run_ = nullptr;
            refreshNow();
        });
    }
    showFailure({}, {});
    refreshNow();
}

void TrainingDashboard::setComparisons(const QList<TrainingRun*>& runs) {
    removeComparisons();
    for (TrainingRun* run : runs) {
        const QString label = runLabel(run);
        ComparedRun compared{run,
                             {nullptr, addCurve(lossPlot_, tr("%1 train").arg(label), true),
                              addCurve(lossPlot_, label, true), addCurve(accuracyPlot_, tr("%1 train").arg(label), true),
                              addCurve(accuracyPlot_, label, true)}};
        // The legend names each run once, by its validation curve; the note says dashed is train.
        compared.curves[std::size_t(Curve::EpochTrainLoss)]->removeFromLegend();
        compared.curves[std::size_t(Curve::EpochTrainAccuracy)]->removeFromLegend();
        compared_.append(compared);
        connect(run, &TrainingRun::reloaded, this, &TrainingDashboard::refreshNow);
        connect(run, &QObject::destroyed, this, [this, run] {
            QList<TrainingRun*> remaining;
            for (const ComparedRun& other : compared_)
                if (other.run != run) remaining << other.run;
            setComparisons(remaining);
        });
    }
    applyPalette();
    refreshNow();
}

void TrainingDashboard::removeComparisons() {
    for (const ComparedRun& compared : compared_) {
        compared.run->disconnect(this);
        for (QCPGraph* graph : compared.curves)
            if (graph) graph->parentPlot()->removeGraph(graph);
    }
    compared_.clear();
}

void TrainingDashboard::setEmptyText(const QString& text) {
    emptyText_ = text;
    refreshStatus();
}

void TrainingDashboard::setRunControlsVisible(bool visible) {
    runControlsVisible_ = visible;
    stop_->setVisible(visible);
    kill_->setVisible(visible);
    resume_->setVisible(visible && resumable_);
}

void TrainingDashboard::setResumable(bool resumable) {
    resumable_ = resumable;
    resume_->setVisible(runControlsVisible_ && resumable_);
}

void TrainingDashboard::setRunning(bool running, bool stopping) {
    running_ = running;
    stop_->setEnabled(running && !stopping);
    kill_->setEnabled(running);
    stop_->setText(stopping ? tr("Stopping…") : tr("Stop"));
}

void TrainingDashboard::showFailure(const QString& reason, const QString& stderrTail) {
    failureBox_->setVisible(!reason.isEmpty() && compared_.isEmpty());
    QPalette palette = failureReason_->palette();
    palette.setColor(QPalette::WindowText, problemColor(palette));
    failureReason_->setPalette(palette);
    failureReason_->setText(reason.isEmpty() ? QString() : tr("The run failed: %1").arg(reason));
    failureLog_->setPlainText(stderrTail.isEmpty() ? tr("(the worker wrote nothing on standard error)") : stderrTail);
    failureLog_->setVisible(!reason.isEmpty());
}

QString TrainingDashboard::statusText() const { return status_->text(); }

void TrainingDashboard::scheduleRefresh() {
    if (!replotTimer_->isActive()) replotTimer_->start();
}

void TrainingDashboard::refreshNow() {
    replotTimer_->stop();
    refreshCurves();
    refreshMatrix();
    refreshStatus();
}

void TrainingDashboard::refreshCurves() {
    fillCurves(run_, mainCurves_);
    for (const ComparedRun& compared : compared_) fillCurves(compared.run, compared.curves);
    refreshComparisonNote();

    // With runs compared, the main run is named in the legend like the others.
    const bool comparing = !compared_.isEmpty();
    const QString mainLabel = run_ ? runLabel(run_) : QString();
    curve(Curve::EpochTrainLoss)->setName(comparing ? tr("%1 train").arg(mainLabel) : tr("train loss"));
    curve(Curve::EpochValidationLoss)->setName(comparing ? mainLabel : tr("validation loss"));
    curve(Curve::EpochTrainAccuracy)->setName(comparing ? tr("%1 train").arg(mainLabel) : tr("train accuracy"));
    curve(Curve::EpochValidationAccuracy)->setName(comparing ? mainLabel : tr("validation accuracy"));
    for (Curve hidden : {Curve::StepLoss, Curve::EpochTrainLoss, Curve::EpochTrainAccuracy}) {
        if (comparing) curve(hidden)->removeFromLegend();
        else curve(hidden)->addToLegend();
    }
    curve(Curve::StepLoss)->setVisible(!comparing);
    for (QCustomPlot* plot : {lossPlot_, accuracyPlot_}) fitLegendColumns(plot);

    QList<const TrainingRun*> shown;
    if (run_) shown << run_;
    for (const ComparedRun& compared : compared_) shown << compared.run;
    double lastEpoch = 1;
    for (const TrainingRun* run : shown) {
        lastEpoch = std::max<double>(lastEpoch, run->totalEpochs());
        if (!run->epochs().isEmpty()) lastEpoch = std::max<double>(lastEpoch, run->epochs().last().epoch);
        if (!run->steps().isEmpty()) lastEpoch = std::max(lastEpoch, std::ceil(run->steps().last().epochPosition));
    }
    for (QCustomPlot* plot : {lossPlot_, accuracyPlot_}) plot->xAxis->setRange(0, lastEpoch + 0.25);
    double highestLoss = 0;
    for (int i = 0; i < lossPlot_->graphCount(); ++i) {
        if (!lossPlot_->graph(i)->visible()) continue;
        bool found = false;
        const QCPRange range = lossPlot_->graph(i)->getValueRange(found);
        if (found) highestLoss = std::max(highestLoss, range.upper);
    }
    lossPlot_->yAxis->setRange(0, highestLoss > 0 ? highestLoss * 1.08 : 1.0);
    accuracyPlot_->yAxis->setRange(0, 100);
    lossPlot_->replot(QCustomPlot::rpQueuedReplot);
    accuracyPlot_->replot(QCustomPlot::rpQueuedReplot);
}

void TrainingDashboard::refreshComparisonNote() {
    comparisonNote_->setVisible(!compared_.isEmpty());
    if (compared_.isEmpty()) return;
    const QPalette colors = palette();
    // Each run's best validation accuracy stands in for the single-run figures, hidden while comparing.
    auto entry = [this, &colors](int index, const TrainingRun* run) {
        const auto best = run->bestValidationAccuracy();
        return QStringLiteral("<span style=\"color:%1\">■</span>&nbsp;%2 (%3 on %4, %5; %6)")
            .arg(seriesColor(index, colors).name(), runLabel(run).toHtmlEscaped(), run->modelName().toHtmlEscaped(),
                 run->datasetName().toHtmlEscaped(), run->backend().toHtmlEscaped(),
                 best ? tr("best validation %1%").arg(QString::number(*best * 100, 'f', 1))
                      : tr("no epoch finished"));
    };
    QStringList entries;
    if (run_) entries << entry(0, run_);
    for (int i = 0; i < compared_.size(); ++i) entries << entry(i + 1, compared_[i].run);
    comparisonNote_->setText(tr("Solid: validation, dashed: train<br>%1").arg(entries.join(QStringLiteral("&nbsp;&nbsp; "))));
}

void TrainingDashboard::refreshMatrix() {
    if (!run_ || run_->confusionMatrix().isEmpty()) {
        matrix_->clear();
        matrixTitle_->setText(tr("Validation confusion matrix"));
        return;
    }
    matrix_->setMatrix(run_->classNames(), run_->confusionMatrix());
    matrixTitle_->setText(tr("Validation confusion matrix, epoch %1").arg(run_->epochs().isEmpty() ? 0 : run_->epochs().last().epoch));
}

void TrainingDashboard::refreshStatus() {
    // A comparison has no single status, progress or confusion matrix: like TensorBoard, it shows
    // the runs' curves side by side, and the note names each run with its best accuracy.
    const bool comparing = !compared_.isEmpty();
    for (QWidget* singleRun : {static_cast<QWidget*>(progress_), static_cast<QWidget*>(throughput_),
                               static_cast<QWidget*>(learningRate_), static_cast<QWidget*>(best_), matrixPane_})
        singleRun->setVisible(!comparing);
    failureBox_->setVisible(!comparing && !failureReason_->text().isEmpty());
    if (comparing) {
        status_->setText(tr("Comparing %1 runs").arg(compared_.size() + (run_ ? 1 : 0)));
        return;
    }
    if (!run_ || run_->state() == TrainingRun::State::Empty) {
        status_->setText(running_ ? tr("Starting the worker…") : emptyText_);
        progress_->setRange(0, 1);
        progress_->setValue(0);
        progress_->setFormat(QString());
        throughput_->clear();
        learningRate_->clear();
        best_->clear();
        return;
    }
    const TrainingRun& run = *run_;
    const QString what = tr("%1 on %2 (%3)").arg(run.modelName(), run.datasetName(), run.backend());
    switch (run.state()) {
    case TrainingRun::State::Running:
        status_->setText(tr("Training %1 — epoch %2 of %3").arg(what).arg(std::max(1, run.currentEpoch())).arg(run.totalEpochs()));
        break;
    case TrainingRun::State::Finished: {
        const FinishedEvent& finished = *run.finishedEvent();
        const QString reason = QString::fromStdString(finished.reason);
        if (reason == "stopped" && finished.epochsRun == 0)
            status_->setText(tr("Stopped %1 at step %2, in its first epoch; Resume continues from its checkpoint.")
                                 .arg(what)
                                 .arg(run.currentStep()));
        else if (reason == "stopped")
            status_->setText(tr("Stopped %1 after %2; Resume continues from its checkpoint.")
                                 .arg(what, countOf(finished.epochsRun, tr("epoch"), tr("epochs"))));
        else
            status_->setText(tr("Finished %1 (%2)").arg(what, reason == "early_stopped" ? tr("stopped early: no better validation accuracy")
                                                                                       : tr("all epochs done")));
        if (run.predictedTotalSeconds())
            status_->setText(status_->text() + QStringLiteral("; ") +
                             predictedBesideActual(*run.predictedTotalSeconds(), finished.wallSeconds));
        break;
    }
    case TrainingRun::State::Failed: status_->setText(tr("Failed: %1").arg(run.failureReason())); break;
    case TrainingRun::State::Killed:
        status_->setText(tr("You killed %1 at step %2; Resume continues from its last checkpoint, if it wrote one.")
                             .arg(what)
                             .arg(run.currentStep()));
        break;
    case TrainingRun::State::Empty: break;
    }
    const qint64 total = std::max<qint64>(1, run.totalSteps());
    const qint64 done = std::min(run.currentStep(), total);
    progress_->setRange(0, int(std::min<qint64>(total, INT_MAX)));
    progress_->setValue(int(std::min<qint64>(done, INT_MAX)));
    const double eta = run.etaSeconds();
    progress_->setFormat(tr("step %1 of %2 · %3%4")
                             .arg(done)
                             .arg(run.totalSteps())
                             .arg(QString::number(100.0 * double(done) / double(total), 'f', 0) + '%')
                             .arg(run.state() == TrainingRun::State::Running && eta >= 0
                                      ? tr(" · %1 left").arg(formatDuration(eta))
                                      : QString()));
    // Throughput and learning rate come with the first step or epoch event; until then say so
    // rather than show zeros.
    const bool measured = !run.steps().isEmpty() || !run.epochs().isEmpty();
    throughput_->setText(measured ? tr("%1 images/s").arg(QString::number(run.imagesPerSecond(), 'f', 0))
                                  : tr("images/s after the first step"));
    learningRate_->setText(measured ? tr("learning rate %1").arg(QString::number(run.learningRate(), 'g', 3))
                                    : QString());
    QString best;
    if (const auto accuracy = run.bestValidationAccuracy())
        best = tr("best validation accuracy %1%").arg(QString::number(*accuracy * 100, 'f', 1));
    if (const auto test = run.testAccuracy())
        best += (best.isEmpty() ? QString() : QStringLiteral(" · ")) +
                tr("test accuracy %1%").arg(QString::number(*test * 100, 'f', 1));
    best_->setText(best);
}

void TrainingDashboard::applyPalette() {
    const QPalette colors = palette();
    const QColor text = colors.color(QPalette::Text);
    QColor grid = colors.color(QPalette::Mid);
    grid.setAlphaF(0.6f);
    for (QCustomPlot* plot : {lossPlot_, accuracyPlot_}) {
        plot->setBackground(colors.color(QPalette::Base));
        plot->axisRect()->setBackground(colors.color(QPalette::Base));
        for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
            axis->setBasePen(QPen(text));
            axis->setTickPen(QPen(text));
            axis->setSubTickPen(QPen(text));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        }
        plot->legend->setBrush(colors.color(QPalette::Base));
        plot->legend->setBorderPen(QPen(colors.color(QPalette::Mid)));
        plot->legend->setTextColor(text);
        plot->legend->setFont(font());
        for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
            axis->setTickLabelFont(font());
            axis->setLabelFont(font());
        }
    }
    // One run: train and validation in two colours. Runs compared: a colour per run, validation
    // solid and train dashed.
    const bool comparing = !compared_.isEmpty();
    auto styleRun = [](const CurveSet& curves, const QColor& train, const QColor& validation, Qt::PenStyle trainLine) {
        QColor stepColor = train;
        stepColor.setAlphaF(0.45f);
        styleCurve(curves[std::size_t(Curve::StepLoss)], stepColor, 1.2, Qt::SolidLine);
        styleCurve(curves[std::size_t(Curve::EpochTrainLoss)], train, 2, trainLine);
        styleCurve(curves[std::size_t(Curve::EpochValidationLoss)], validation, 2, Qt::SolidLine);
        styleCurve(curves[std::size_t(Curve::EpochTrainAccuracy)], train, 2, trainLine);
        styleCurve(curves[std::size_t(Curve::EpochValidationAccuracy)], validation, 2, Qt::SolidLine);
    };
    if (comparing) styleRun(mainCurves_, seriesColor(0, colors), seriesColor(0, colors), Qt::DashLine);
    else styleRun(mainCurves_, seriesColor(0, colors), seriesColor(1, colors), Qt::SolidLine);
    for (int i = 0; i < compared_.size(); ++i)
        styleRun(compared_[i].curves, seriesColor(i + 1, colors), seriesColor(i + 1, colors), Qt::DashLine);
    refreshComparisonNote();
    lossPlot_->replot(QCustomPlot::rpQueuedReplot);
    accuracyPlot_->replot(QCustomPlot::rpQueuedReplot);
}

bool TrainingDashboard::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Resize && (watched == lossPlot_ || watched == accuracyPlot_)) {
        auto* plot = static_cast<QCustomPlot*>(watched);
        fitLegendColumns(plot);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
    return QWidget::eventFilter(watched, event);
}

void TrainingDashboard::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) applyPalette();
    QWidget::changeEvent(event);
}

void TrainingDashboard::exportPlots(const QString& path) {
    refreshCurves();
    cnnstudio::ui::exportPlots({lossPlot_, accuracyPlot_}, path, QSize(exportWidth, exportPlotHeight));
}

void TrainingDashboard::exportMetricsCsv(const QString& path) {
    writeFileAtomically(path.toStdString(), (run_ ? run_->epochsCsv() : TrainingRun().epochsCsv()).toStdString());
}

void TrainingDashboard::chooseExportFile() {
    const QString suggested = (run_ ? run_->displayName() : QStringLiteral("training")) + "-plots.png";
    QString path = QFileDialog::getSaveFileName(this, tr("Export the loss and accuracy plots to one file"), suggested,
                                                tr("PNG images (*.png);;PDF documents (*.pdf)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += ".png";
    try {
        exportPlots(path);
        emit message(tr("Wrote the loss and accuracy plots to %1").arg(path));
    } catch (const Error& error) {
        QMessageBox::warning(this, tr("Export plots"), QString::fromStdString(error.what()));
    }
}

void TrainingDashboard::chooseCsvFile() {
    const QString suggested = run_ ? run_->displayName() : QStringLiteral("training");
    const QString path = QFileDialog::getSaveFileName(this, tr("Export metrics"), suggested + "-metrics.csv",
                                                      tr("CSV tables (*.csv)"));
    if (path.isEmpty()) return;
    try {
        exportMetricsCsv(path);
        emit message(tr("Wrote the per-epoch metrics to %1").arg(path));
    } catch (const Error& error) {
        QMessageBox::warning(this, tr("Export metrics"), QString::fromStdString(error.what()));
    }
}

}  // namespace cnnstudio::ui
