#include "cnnstudio/ui/training/training_dashboard.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include <QCheckBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/training/confusion_matrix_plot.h"
#include "cnnstudio/ui/training/training_run.h"
#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

constexpr int replotIntervalMs = 100;  // at most ten redraws a second
constexpr int curveCount = 5;

QColor trainColor(const QPalette& palette) {
    return isDarkPalette(palette) ? QColor(100, 170, 255) : QColor(30, 100, 200);
}
QColor validationColor(const QPalette& palette) {
    return isDarkPalette(palette) ? QColor(255, 170, 80) : QColor(220, 110, 0);
}

QCustomPlot* makePlot(const QString& yLabel, QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumSize(260, 170);
    plot->xAxis->setLabel(QObject::tr("epoch"));
    plot->yAxis->setLabel(yLabel);
    plot->legend->setVisible(true);
    plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
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

void setCurveData(QCPGraph* graph, const QVector<double>& x, const QVector<double>& y) {
    graph->setData(x, y, true);
}

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
    progress_ = new QProgressBar(this);
    progress_->setObjectName("runProgress");
    progress_->setTextVisible(true);
    throughput_ = new QLabel(this);
    throughput_->setObjectName("throughput");
    learningRate_ = new QLabel(this);
    learningRate_->setObjectName("learningRate");
    best_ = new QLabel(this);
    best_->setObjectName("bestAccuracy");
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
    QCPGraph* stepLoss = addCurve(lossPlot_, tr("train loss (steps)"), false);
    QCPGraph* trainLoss = addCurve(lossPlot_, tr("train loss"), true);
    QCPGraph* validationLoss = addCurve(lossPlot_, tr("validation loss"), true);
    QCPGraph* trainAccuracy = addCurve(accuracyPlot_, tr("train accuracy"), true);
    QCPGraph* validationAccuracy = addCurve(accuracyPlot_, tr("validation accuracy"), true);
    const QCPGraph* mains[curveCount] = {stepLoss, trainLoss, validationLoss, trainAccuracy, validationAccuracy};
    for (int i = 0; i < curveCount; ++i) {
        QCustomPlot* plot = mains[i]->parentPlot();
        QCPGraph* overlay = addCurve(plot, QString(), i != 0);
        overlay->setVisible(false);
        overlay->removeFromLegend();
        overlay->setProperty("curve", i);
    }

    matrixTitle_ = new QLabel(tr("Validation confusion matrix"), this);
    normalised_ = new QCheckBox(tr("Row-normalised (recall)"), this);
    normalised_->setObjectName("normalisedToggle");
    matrix_ = new ConfusionMatrixPlot(this);
    matrix_->setObjectName("confusionMatrix");
    connect(normalised_, &QCheckBox::toggled, matrix_, &ConfusionMatrixPlot::setNormalised);

    auto* exportPlots = new QPushButton(tr("Export plots…"), this);
    exportPlots->setToolTip(tr("Save the loss and accuracy plots as PNG or PDF"));
    auto* exportCsv = new QPushButton(tr("Export metrics CSV…"), this);
    exportCsv->setToolTip(tr("Save the per-epoch metrics as a CSV table"));
    connect(exportPlots, &QPushButton::clicked, this, &TrainingDashboard::chooseExportFile);
    connect(exportCsv, &QPushButton::clicked, this, &TrainingDashboard::chooseCsvFile);
    connect(stop_, &QPushButton::clicked, this, &TrainingDashboard::stopRequested);
    connect(kill_, &QPushButton::clicked, this, &TrainingDashboard::killRequested);

    auto* header = new QHBoxLayout;
    header->addWidget(status_, 1);
    header->addWidget(stop_);
    header->addWidget(kill_);
    auto* figures = new QHBoxLayout;
    figures->addWidget(throughput_);
    figures->addSpacing(16);
    figures->addWidget(learningRate_);
    figures->addSpacing(16);
    figures->addWidget(best_);
    figures->addStretch(1);
    figures->addWidget(exportPlots);
    figures->addWidget(exportCsv);

    auto* plots = new QSplitter(Qt::Vertical, this);
    plots->addWidget(lossPlot_);
    plots->addWidget(accuracyPlot_);
    auto* matrixPane = new QWidget(this);
    auto* matrixLayout = new QVBoxLayout(matrixPane);
    matrixLayout->setContentsMargins(0, 0, 0, 0);
    auto* matrixHeader = new QHBoxLayout;
    matrixHeader->addWidget(matrixTitle_, 1);
    matrixHeader->addWidget(normalised_);
    matrixLayout->addLayout(matrixHeader);
    matrixLayout->addWidget(matrix_, 1);
    auto* body = new QSplitter(Qt::Horizontal, this);
    body->addWidget(plots);
    body->addWidget(matrixPane);
    body->setStretchFactor(0, 3);
    body->setStretchFactor(1, 2);
    body->setSizes({600, 400});
    accuracyPlot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);

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

QCPGraph* TrainingDashboard::curve(Curve which) const {
    switch (which) {
    case Curve::StepLoss: return lossPlot_->graph(0);
    case Curve::EpochTrainLoss: return lossPlot_->graph(1);
    case Curve::EpochValidationLoss: return lossPlot_->graph(2);
    case Curve::EpochTrainAccuracy: return accuracyPlot_->graph(0);
    case Curve::EpochValidationAccuracy: return accuracyPlot_->graph(1);
    }
    return nullptr;
}

QCPGraph* TrainingDashboard::comparisonCurve(Curve which) const {
    switch (which) {
    case Curve::StepLoss: return lossPlot_->graph(3);
    case Curve::EpochTrainLoss: return lossPlot_->graph(4);
    case Curve::EpochValidationLoss: return lossPlot_->graph(5);
    case Curve::EpochTrainAccuracy: return accuracyPlot_->graph(2);
    case Curve::EpochValidationAccuracy: return accuracyPlot_->graph(3);
    }
    return nullptr;
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

void TrainingDashboard::setComparison(TrainingRun* run) {
    if (comparison_) comparison_->disconnect(this);
    comparison_ = run;
    if (comparison_) {
        connect(comparison_, &TrainingRun::reloaded, this, &TrainingDashboard::refreshNow);
        connect(comparison_, &QObject::destroyed, this, [this] {
            comparison_ = nullptr;
            refreshNow();
        });
    }
    refreshNow();
}

void TrainingDashboard::setRunControlsVisible(bool visible) {
    stop_->setVisible(visible);
    kill_->setVisible(visible);
}

void TrainingDashboard::setRunning(bool running, bool stopping) {
    running_ = running;
    stop_->setEnabled(running && !stopping);
    kill_->setEnabled(running);
    stop_->setText(stopping ? tr("Stopping…") : tr("Stop"));
}

void TrainingDashboard::showFailure(const QString& reason, const QString& stderrTail) {
    failureBox_->setVisible(!reason.isEmpty());
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
    auto fill = [](TrainingRun* run, QCPGraph* const* graphs) {
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
        setCurveData(graphs[0], stepX, stepLoss);
        setCurveData(graphs[1], epochX, trainLoss);
        setCurveData(graphs[2], validationX, validationLoss);
        setCurveData(graphs[3], epochX, trainAccuracy);
        setCurveData(graphs[4], validationX, validationAccuracy);
    };
    QCPGraph* const mains[curveCount] = {curve(Curve::StepLoss), curve(Curve::EpochTrainLoss),
                                         curve(Curve::EpochValidationLoss), curve(Curve::EpochTrainAccuracy),
                                         curve(Curve::EpochValidationAccuracy)};
    QCPGraph* const overlays[curveCount] = {
        comparisonCurve(Curve::StepLoss), comparisonCurve(Curve::EpochTrainLoss),
        comparisonCurve(Curve::EpochValidationLoss), comparisonCurve(Curve::EpochTrainAccuracy),
        comparisonCurve(Curve::EpochValidationAccuracy)};
    fill(run_, mains);
    fill(comparison_, overlays);
    comparisonNote_->setVisible(comparison_ != nullptr);
    if (comparison_)
        comparisonNote_->setText(tr("Dashed: %1 (%2 on %3, %4)")
                                     .arg(comparison_->displayName(), comparison_->modelName(),
                                          comparison_->datasetName(), comparison_->backend()));

    const QStringList overlayNames = {tr("train loss (steps)"), tr("train loss"), tr("validation loss"),
                                      tr("train accuracy"), tr("validation accuracy")};
    for (int i = 0; i < curveCount; ++i) {
        QCPGraph* overlay = overlays[i];
        const bool shown = comparison_ != nullptr;
        overlay->setVisible(shown);
        overlay->setName(shown ? tr("compared: %1").arg(overlayNames[i]) : QString());
        if (shown && i != 0) overlay->addToLegend();
        else overlay->removeFromLegend();
    }

    double lastEpoch = 1;
    for (TrainingRun* run : {run_, comparison_})
        if (run) {
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
    if (!run_ || run_->state() == TrainingRun::State::Empty) {
        status_->setText(running_ ? tr("Starting the worker…")
                                  : tr("No run yet: design a network, choose the settings and press Train."));
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
        if (reason == "stopped")
            status_->setText(tr("Stopped %1 after %n epoch(s); resume it from Run history.", nullptr, finished.epochsRun)
                                 .arg(what));
        else
            status_->setText(tr("Finished %1 (%2)").arg(what, reason == "early_stopped" ? tr("stopped early: no better validation accuracy")
                                                                                       : tr("all epochs done")));
        break;
    }
    case TrainingRun::State::Failed: status_->setText(tr("Failed: %1").arg(run.failureReason())); break;
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
    throughput_->setText(tr("%1 images/s").arg(QString::number(run.imagesPerSecond(), 'f', 0)));
    learningRate_->setText(tr("learning rate %1").arg(QString::number(run.learningRate(), 'g', 3)));
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
    const QColor train = trainColor(colors), validation = validationColor(colors);
    QColor stepColor = train;
    stepColor.setAlphaF(0.45f);
    auto style = [](QCPGraph* graph, const QColor& color, double width, Qt::PenStyle line) {
        graph->setPen(QPen(color, width, line));
        QCPScatterStyle scatter = graph->scatterStyle();
        if (scatter.shape() != QCPScatterStyle::ssNone) {
            scatter.setPen(QPen(color, 1.5));
            scatter.setBrush(color);
            graph->setScatterStyle(scatter);
        }
    };
    style(curve(Curve::StepLoss), stepColor, 1.2, Qt::SolidLine);
    style(curve(Curve::EpochTrainLoss), train, 2, Qt::SolidLine);
    style(curve(Curve::EpochValidationLoss), validation, 2, Qt::SolidLine);
    style(curve(Curve::EpochTrainAccuracy), train, 2, Qt::SolidLine);
    style(curve(Curve::EpochValidationAccuracy), validation, 2, Qt::SolidLine);
    style(comparisonCurve(Curve::StepLoss), stepColor, 1, Qt::DashLine);
    style(comparisonCurve(Curve::EpochTrainLoss), train, 1.6, Qt::DashLine);
    style(comparisonCurve(Curve::EpochValidationLoss), validation, 1.6, Qt::DashLine);
    style(comparisonCurve(Curve::EpochTrainAccuracy), train, 1.6, Qt::DashLine);
    style(comparisonCurve(Curve::EpochValidationAccuracy), validation, 1.6, Qt::DashLine);
    lossPlot_->replot(QCustomPlot::rpQueuedReplot);
    accuracyPlot_->replot(QCustomPlot::rpQueuedReplot);
}

void TrainingDashboard::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) applyPalette();
    QWidget::changeEvent(event);
}

void TrainingDashboard::exportPlots(const QString& basePath) {
    const QFileInfo info(basePath);
    const bool pdf = info.suffix().compare("pdf", Qt::CaseInsensitive) == 0;
    const QString stem = info.dir().filePath(info.suffix().isEmpty() ? info.fileName() : info.completeBaseName());
    refreshCurves();
    for (const auto& [plot, name] : {std::pair{lossPlot_, QStringLiteral("loss")}, std::pair{accuracyPlot_, QStringLiteral("accuracy")}}) {
        const QString file = stem + '-' + name + (pdf ? ".pdf" : ".png");
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const bool written = pdf ? plot->savePdf(file, 800, 500) : plot->savePng(file, 1000, 620, 1.0);
        if (!written)
            throw Error("could not write the plot", file.toStdString(),
                        "check that the folder exists and you may write to it");
    }
}

void TrainingDashboard::exportMetricsCsv(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text) ||
        file.write((run_ ? run_->epochsCsv() : TrainingRun().epochsCsv()).toUtf8()) < 0)
        throw Error("could not write the metrics: " + file.errorString().toStdString(), path.toStdString(),
                    "check that the folder exists and you may write to it");
}

void TrainingDashboard::chooseExportFile() {
    const QString suggested = run_ ? run_->displayName() : QStringLiteral("training");
    const QString path = QFileDialog::getSaveFileName(this, tr("Export plots"), suggested + ".png",
                                                      tr("PNG images (*.png);;PDF documents (*.pdf)"));
    if (path.isEmpty()) return;
    try {
        exportPlots(path);
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
    } catch (const Error& error) {
        QMessageBox::warning(this, tr("Export metrics"), QString::fromStdString(error.what()));
    }
}

}  // namespace cnnstudio::ui
