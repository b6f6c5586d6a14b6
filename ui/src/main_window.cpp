#include "cnnstudio/ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QUndoStack>

#include "cnnstudio/backend.h"
#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/ui/design_area.h"
#include "cnnstudio/ui/design_document.h"
#include "cnnstudio/ui/designer_canvas.h"
#include "cnnstudio/ui/designer_view.h"
#include "cnnstudio/ui/formatting.h"
#include "cnnstudio/ui/run_history_panel.h"
#include "cnnstudio/ui/run_settings_panel.h"
#include "cnnstudio/ui/train_area.h"
#include "cnnstudio/ui/training_controller.h"
#include "cnnstudio/ui/training_dashboard.h"
#include "cnnstudio/ui/training_run.h"
#include "action_icons.h"

namespace cnnstudio::ui {
namespace {

constexpr int maximumRecentFiles = 8;
constexpr const char* startingPreset = "fer-cnn";
constexpr int statusMessageMs = 6000;

QIcon themedIcon(const char* themeName, QStyle::StandardPixmap fallback, const QStyle* style) {
    return QIcon::fromTheme(QString::fromLatin1(themeName), style->standardIcon(fallback));
}

}  // namespace

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent), persistSettings_(options.persistSettings) {
    setObjectName("mainWindow");
    document_ = new DesignDocument(this);
    controller_ = new TrainingController(this);
    liveRun_ = new TrainingRun(this);
    historyRun_ = new TrainingRun(this);
    comparisonRun_ = new TrainingRun(this);

    design_ = new DesignArea(document_, this);
    train_ = new TrainArea(this);
    train_->dashboard()->setRun(liveRun_);
    history_ = new RunHistoryPanel(this);
    history_->setObjectName("runHistory");
    historyDashboard_ = new TrainingDashboard(this);
    historyDashboard_->setObjectName("historyDashboard");
    historyDashboard_->setRun(historyRun_);
    auto* historyPage = new QSplitter(Qt::Horizontal, this);
    historyPage->addWidget(history_);
    historyPage->addWidget(historyDashboard_);
    historyPage->setStretchFactor(0, 2);
    historyPage->setStretchFactor(1, 3);
    historyPage->setSizes({640, 800});

    tabs_ = new QTabWidget(this);
    tabs_->setObjectName("areas");
    tabs_->setDocumentMode(true);
    tabs_->addTab(design_, tr("Design"));
    tabs_->addTab(train_, tr("Train"));
    tabs_->addTab(historyPage, tr("Run history"));
    setCentralWidget(tabs_);

    totals_ = new QLabel(this);
    totals_->setObjectName("totals");
    statusBar()->addPermanentWidget(totals_);

    createActions();
    createMenus();
    createToolBar();

    connect(design_, &DesignArea::message, this, [this](const QString& text) {
        statusBar()->showMessage(text, statusMessageMs);
    });
    connect(document_, &DesignDocument::analysisChanged, this, &MainWindow::refreshTotals);
    connect(document_, &DesignDocument::documentReset, this, &MainWindow::refreshTitle);
    connect(document_, &DesignDocument::filePathChanged, this, &MainWindow::refreshTitle);
    connect(document_, &DesignDocument::modifiedChanged, this, &MainWindow::refreshTitle);
    connect(train_, &TrainArea::trainRequested, this, &MainWindow::startTraining);

    connect(controller_, &TrainingController::eventReceived, liveRun_, &TrainingRun::addEvent);
    connect(controller_, &TrainingController::stateChanged, this, &MainWindow::refreshRunActions);
    connect(controller_, &TrainingController::runStarted, this, [this](const QString& directory) {
        statusBar()->showMessage(tr("Training in %1").arg(directory), statusMessageMs);
    });
    connect(controller_, &TrainingController::runFinished, this, [this](const QJsonObject& finished) {
        statusBar()->showMessage(tr("The run ended: %1").arg(finished.value("reason").toString()), statusMessageMs);
        history_->refresh();
        if (closeAfterStop_) close();
    });
    connect(controller_, &TrainingController::runFailed, this, [this](const QString& reason, const QString& tail) {
        train_->dashboard()->showFailure(reason, tail);
        statusBar()->showMessage(tr("The run failed"), statusMessageMs);
        history_->refresh();
        if (closeAfterStop_) close();
    });
    connect(train_->dashboard(), &TrainingDashboard::stopRequested, controller_, &TrainingController::stop);
    connect(train_->dashboard(), &TrainingDashboard::killRequested, killAction_, &QAction::trigger);

    connect(history_, &RunHistoryPanel::openRequested, this, [this](const QString& directory) {
        openRunInHistory(directory);
    });
    connect(history_, &RunHistoryPanel::compareRequested, this, &MainWindow::compareRuns);
    connect(history_, &RunHistoryPanel::resumeRequested, this, &MainWindow::resumeRun);
    connect(history_, &RunHistoryPanel::runsRootChanged, this, [this] { saveSettings(); });

    restoreSettings(options);
    if (options.openFile.isEmpty() || !openFile(options.openFile)) newFromPreset(startingPreset);
    history_->refresh();
    refreshRunActions();
    refreshTitle();
    refreshTotals();
}

MainWindow::~MainWindow() {
    // The views observe the document and the runs: they go first, while those still exist.
    delete tabs_;
}

void MainWindow::createActions() {
    const QStyle* look = style();
    newAction_ = new QAction(themedIcon("document-new", QStyle::SP_FileIcon, look), tr("&New network"), this);
    newAction_->setShortcut(QKeySequence::New);
    newAction_->setStatusTip(tr("Start a network with just an Input node"));
    connect(newAction_, &QAction::triggered, this, &MainWindow::newNetwork);

    openAction_ = new QAction(themedIcon("document-open", QStyle::SP_DialogOpenButton, look), tr("&Open…"), this);
    openAction_->setShortcut(QKeySequence::Open);
    connect(openAction_, &QAction::triggered, this, &MainWindow::chooseFileToOpen);

    saveAction_ = new QAction(themedIcon("document-save", QStyle::SP_DialogSaveButton, look), tr("&Save"), this);
    saveAction_->setShortcut(QKeySequence::Save);
    connect(saveAction_, &QAction::triggered, this, &MainWindow::save);

    saveAsAction_ = new QAction(tr("Save &as…"), this);
    saveAsAction_->setShortcut(QKeySequence::SaveAs);
    connect(saveAsAction_, &QAction::triggered, this, &MainWindow::saveAs);

    exportPngAction_ = new QAction(tr("Export diagram as &PNG…"), this);
    connect(exportPngAction_, &QAction::triggered, this, [this] { exportDiagram("png"); });
    exportSvgAction_ = new QAction(tr("Export diagram as S&VG…"), this);
    connect(exportSvgAction_, &QAction::triggered, this, [this] { exportDiagram("svg"); });

    quitAction_ = new QAction(tr("&Quit"), this);
    quitAction_->setShortcut(QKeySequence::Quit);
    quitAction_->setMenuRole(QAction::QuitRole);
    connect(quitAction_, &QAction::triggered, this, &QWidget::close);

    undoAction_ = document_->undoStack()->createUndoAction(this, tr("&Undo"));
    undoAction_->setIcon(themedIcon("edit-undo", QStyle::SP_ArrowBack, look));
    undoAction_->setShortcut(QKeySequence::Undo);
    redoAction_ = document_->undoStack()->createRedoAction(this, tr("&Redo"));
    redoAction_->setIcon(themedIcon("edit-redo", QStyle::SP_ArrowForward, look));
    redoAction_->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::Key_Y)});

    // Delete and Select all act on the canvas only, so text fields keep their own meaning of them.
    deleteAction_ = new QAction(themedIcon("edit-delete", QStyle::SP_TrashIcon, look), tr("&Delete"), this);
    deleteAction_->setShortcuts({QKeySequence::Delete, QKeySequence(Qt::Key_Backspace)});
    deleteAction_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    deleteAction_->setStatusTip(tr("Delete the selected nodes and connections"));
    connect(deleteAction_, &QAction::triggered, design_->canvas(), &DesignerCanvas::deleteSelection);
    design_->view()->addAction(deleteAction_);

    selectAllAction_ = new QAction(tr("Select &all"), this);
    selectAllAction_->setShortcut(QKeySequence::SelectAll);
    selectAllAction_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(selectAllAction_, &QAction::triggered, this, [this] {
        for (QGraphicsItem* item : design_->canvas()->items()) item->setSelected(true);
    });
    design_->view()->addAction(selectAllAction_);

    autoLayoutAction_ = new QAction(tr("Auto &layout"), this);
    autoLayoutAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    autoLayoutAction_->setStatusTip(tr("Arrange the nodes top to bottom by depth"));
    connect(autoLayoutAction_, &QAction::triggered, this, [this] {
        document_->autoLayout();
        design_->view()->fitToContents();
    });

    zoomInAction_ = new QAction(themedIcon("zoom-in", QStyle::SP_ArrowUp, look), tr("Zoom &in"), this);
    zoomInAction_->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    connect(zoomInAction_, &QAction::triggered, design_->view(), &DesignerView::zoomIn);
    zoomOutAction_ = new QAction(themedIcon("zoom-out", QStyle::SP_ArrowDown, look), tr("Zoom &out"), this);
    zoomOutAction_->setShortcut(QKeySequence::ZoomOut);
    connect(zoomOutAction_, &QAction::triggered, design_->view(), &DesignerView::zoomOut);
    zoomResetAction_ = new QAction(tr("&Actual size"), this);
    zoomResetAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    connect(zoomResetAction_, &QAction::triggered, design_->view(), &DesignerView::resetZoom);
    fitAction_ = new QAction(tr("&Fit network"), this);
    fitAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_9));
    connect(fitAction_, &QAction::triggered, design_->view(), &DesignerView::fitToContents);

    showDesignAction_ = new QAction(tr("&Design"), this);
    showDesignAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    connect(showDesignAction_, &QAction::triggered, this, [this] { showArea(Area::Design); });
    showTrainAction_ = new QAction(tr("&Train"), this);
    showTrainAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_2));
    connect(showTrainAction_, &QAction::triggered, this, [this] { showArea(Area::Train); });
    showHistoryAction_ = new QAction(tr("Run &history"), this);
    showHistoryAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_3));
    connect(showHistoryAction_, &QAction::triggered, this, [this] { showArea(Area::History); });

    trainAction_ = new QAction(tr("&Train"), this);
    trainAction_->setShortcut(QKeySequence(Qt::Key_F5));
    trainAction_->setStatusTip(tr("Train this network with the settings of the Train page"));
    connect(trainAction_, &QAction::triggered, this, &MainWindow::startTraining);
    stopAction_ = new QAction(tr("&Stop"), this);
    stopAction_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
    stopAction_->setStatusTip(tr("Finish the current step, write a checkpoint and stop"));
    connect(stopAction_, &QAction::triggered, controller_, &TrainingController::stop);
    killAction_ = new QAction(tr("&Kill the worker"), this);
    killAction_->setStatusTip(tr("End the training process at once"));
    connect(killAction_, &QAction::triggered, this, [this] {
        if (!controller_->isRunning()) return;
        const auto answer = QMessageBox::question(
            this, tr("Kill the worker"),
            tr("End the training process now? Progress since its last checkpoint is lost; Stop keeps it."));
        if (answer == QMessageBox::Yes) controller_->kill();
    });

    refreshPaintedIcons();

    aboutAction_ = new QAction(tr("&About CNN Studio"), this);
    aboutAction_->setMenuRole(QAction::AboutRole);
    connect(aboutAction_, &QAction::triggered, this, [this] {
        QStringList backends;
        for (const std::string& name : availableBackends()) backends << QString::fromStdString(name);
        QMessageBox::about(this, tr("About CNN Studio"),
                           tr("<h3>CNN Studio %1</h3><p>Design convolutional networks, train them on the CPU or "
                              "GPUs, and watch them learn.</p><p>Backends here: %2<br>Qt %3</p>")
                               .arg(QApplication::applicationVersion(), backends.join(", "), qVersion()));
    });
}

void MainWindow::refreshPaintedIcons() {
    const QPalette colors = palette();
    autoLayoutAction_->setIcon(paintedIcon(ActionIcon::AutoLayout, colors));
    fitAction_->setIcon(paintedIcon(ActionIcon::FitNetwork, colors));
    trainAction_->setIcon(paintedIcon(ActionIcon::Train, colors));
    stopAction_->setIcon(paintedIcon(ActionIcon::Stop, colors));
}

void MainWindow::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange && trainAction_) refreshPaintedIcons();
    QMainWindow::changeEvent(event);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(newAction_);
    QMenu* presets = file->addMenu(tr("New from &preset"));
    presets->setObjectName("presetMenu");
    for (const std::string& name : presetNames()) {
        const QString preset = QString::fromStdString(name);
        presets->addAction(preset, this, [this, preset] {
            if (maybeSave()) newFromPreset(preset);
        });
    }
    file->addAction(openAction_);
    recentMenu_ = file->addMenu(tr("Open &recent"));
    file->addAction(saveAction_);
    file->addAction(saveAsAction_);
    file->addSeparator();
    file->addAction(exportPngAction_);
    file->addAction(exportSvgAction_);
    file->addSeparator();
    file->addAction(quitAction_);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(undoAction_);
    edit->addAction(redoAction_);
    edit->addSeparator();
    edit->addAction(deleteAction_);
    edit->addAction(selectAllAction_);
    edit->addSeparator();
    edit->addAction(autoLayoutAction_);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(zoomInAction_);
    view->addAction(zoomOutAction_);
    view->addAction(zoomResetAction_);
    view->addAction(fitAction_);
    view->addSeparator();
    view->addAction(showDesignAction_);
    view->addAction(showTrainAction_);
    view->addAction(showHistoryAction_);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(trainAction_);
    run->addAction(stopAction_);
    run->addAction(killAction_);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(aboutAction_);
}

void MainWindow::createToolBar() {
    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName("mainToolBar");
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->setMovable(false);
    bar->addAction(newAction_);
    bar->addAction(openAction_);
    bar->addAction(saveAction_);
    bar->addSeparator();
    bar->addAction(undoAction_);
    bar->addAction(redoAction_);
    bar->addSeparator();
    bar->addAction(autoLayoutAction_);
    bar->addAction(fitAction_);
    bar->addSeparator();
    bar->addAction(trainAction_);
    bar->addAction(stopAction_);
}

void MainWindow::restoreSettings(const MainWindowOptions& options) {
    resize(1400, 880);
    QString runsRoot = defaultRunsRoot();
    if (persistSettings_) {
        QSettings settings;
        if (const QByteArray geometry = settings.value("window/geometry").toByteArray(); !geometry.isEmpty())
            restoreGeometry(geometry);
        if (const QByteArray state = settings.value("window/state").toByteArray(); !state.isEmpty())
            restoreState(state);
        recentFiles_ = settings.value("files/recent").toStringList();
        runsRoot = settings.value("runs/root", runsRoot).toString();
        // Hardware and hyper-parameters carry over; every session starts on the built-in data set.
        RunSettings run = RunSettings::fromVariantMap(settings.value("train/settings").toMap());
        run.dataset = RunSettings{}.dataset;
        train_->settingsPanel()->setSettings(run);
    }
    if (!options.runsRoot.isEmpty()) runsRoot = options.runsRoot;
    history_->setRunsRoot(runsRoot);
    refreshRecentMenu();
}

void MainWindow::saveSettings() const {
    if (!persistSettings_) return;
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("files/recent", recentFiles_);
    settings.setValue("runs/root", history_->runsRoot());
    settings.setValue("train/settings", train_->settingsPanel()->settings().toVariantMap());
}

void MainWindow::showArea(Area area) {
    tabs_->setCurrentIndex(area == Area::Design ? 0 : area == Area::Train ? 1 : 2);
}

QString MainWindow::totalsText() const { return totals_->text(); }

void MainWindow::refreshTotals() {
    const ShapeReport& report = document_->report();
    QString text = tr("%1 parameters · %2 per image · %3 of activations per image")
                       .arg(formatCount(report.totalParameters), formatFlops(report.totalForwardFlops),
                            formatBytes(report.activationBytesPerImage));
    if (!report.ok()) text += tr(" · %n problem(s)", nullptr, int(report.problems.size()));
    totals_->setText(text);
}

void MainWindow::refreshTitle() {
    const QString name = QString::fromStdString(document_->spec().name);
    const QString file = document_->filePath();
    setWindowTitle(file.isEmpty() ? tr("%1[*] — CNN Studio").arg(name)
                                  : tr("%1 (%2)[*] — CNN Studio").arg(name, QFileInfo(file).fileName()));
    setWindowModified(document_->isModified());
}

void MainWindow::refreshRunActions() {
    const bool running = controller_->isRunning();
    const bool stopping = controller_->state() == TrainingController::State::Stopping;
    trainAction_->setEnabled(!running);
    train_->trainButton()->setEnabled(!running);
    stopAction_->setEnabled(running && !stopping);
    killAction_->setEnabled(running);
    train_->dashboard()->setRunning(running, stopping);
}

void MainWindow::newNetwork() {
    if (!maybeSave()) return;
    document_->newNetwork();
}

void MainWindow::newFromPreset(const QString& name) {
    try {
        document_->loadPreset(name);
    } catch (const Error& error) {
        showError(tr("New from preset"), QString::fromStdString(error.what()));
    }
}

bool MainWindow::openFile(const QString& path) {
    try {
        document_->open(path);
        addRecentFile(path);
        showArea(Area::Design);
        return true;
    } catch (const Error& error) {
        showError(tr("Open network"), QString::fromStdString(error.what()));
        return false;
    }
}

void MainWindow::chooseFileToOpen() {
    if (!maybeSave()) return;
    const QString directory = recentFiles_.isEmpty() ? QString() : QFileInfo(recentFiles_.first()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open network"), directory,
                                                      tr("Network specs (*.json);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
}

bool MainWindow::save() {
    if (document_->filePath().isEmpty()) return saveAs();
    try {
        document_->save(document_->filePath());
        statusBar()->showMessage(tr("Saved %1").arg(document_->filePath()), statusMessageMs);
        return true;
    } catch (const Error& error) {
        showError(tr("Save network"), QString::fromStdString(error.what()));
        return false;
    }
}

bool MainWindow::saveAs() {
    const QString suggested = document_->filePath().isEmpty()
                                  ? QString::fromStdString(document_->spec().name) + ".json"
                                  : document_->filePath();
    QString path = QFileDialog::getSaveFileName(this, tr("Save network"), suggested, tr("Network specs (*.json)"));
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += ".json";
    try {
        document_->save(path);
        addRecentFile(path);
        statusBar()->showMessage(tr("Saved %1").arg(path), statusMessageMs);
        return true;
    } catch (const Error& error) {
        showError(tr("Save network"), QString::fromStdString(error.what()));
        return false;
    }
}

bool MainWindow::maybeSave() {
    if (!document_->isModified()) return true;
    const auto answer = QMessageBox::warning(
        this, tr("Unsaved changes"),
        tr("%1 has changes that are not saved. Save them?").arg(QString::fromStdString(document_->spec().name)),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save) return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::exportDiagram(const QString& format) {
    const QString name = QString::fromStdString(document_->spec().name) + '.' + format;
    const QString filter = format == "svg" ? tr("SVG drawings (*.svg)") : tr("PNG images (*.png)");
    QString path = QFileDialog::getSaveFileName(this, tr("Export diagram"), name, filter);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += '.' + format;
    try {
        if (format == "svg") design_->canvas()->exportSvg(path);
        else design_->canvas()->exportPng(path);
        statusBar()->showMessage(tr("Exported %1").arg(path), statusMessageMs);
    } catch (const Error& error) {
        showError(tr("Export diagram"), QString::fromStdString(error.what()));
    }
}

void MainWindow::addRecentFile(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recentFiles_.removeAll(absolute);
    recentFiles_.prepend(absolute);
    while (recentFiles_.size() > maximumRecentFiles) recentFiles_.removeLast();
    refreshRecentMenu();
    saveSettings();
}

void MainWindow::refreshRecentMenu() {
    recentMenu_->clear();
    for (const QString& path : recentFiles_)
        recentMenu_->addAction(QFileInfo(path).fileName(), this, [this, path] {
            if (maybeSave()) openFile(path);
        })->setStatusTip(path);
    recentMenu_->setEnabled(!recentFiles_.isEmpty());
}

void MainWindow::startTraining() {
    if (controller_->isRunning()) {
        showArea(Area::Train);
        statusBar()->showMessage(tr("A run is training already: stop it first."), statusMessageMs);
        return;
    }
    const RunSettings settings = train_->settingsPanel()->settings();
    if (const QStringList problems = settings.problems(); !problems.isEmpty()) {
        showArea(Area::Train);
        showError(tr("Cannot train yet"), problems.join('\n'));
        return;
    }
    const ShapeReport& report = document_->report();
    if (!report.ok()) {
        QStringList lines;
        for (const auto& [node, message] : report.problems)
            lines << (node.empty() ? QString::fromStdString(message)
                                   : QStringLiteral("%1: %2").arg(QString::fromStdString(node), QString::fromStdString(message)));
        showArea(Area::Design);
        showError(tr("The network has problems"), tr("Fix these on the Design page first:\n%1").arg(lines.join('\n')));
        return;
    }
    const QString runDirectory =
        TrainingController::newRunDirectory(history_->runsRoot(), QString::fromStdString(document_->spec().name));
    liveRun_->clear();
    train_->dashboard()->showFailure({}, {});
    try {
        controller_->start(settings, document_->spec(), runDirectory);
    } catch (const Error& error) {
        showError(tr("Cannot train"), QString::fromStdString(error.what()));
        return;
    }
    saveSettings();
    showArea(Area::Train);
}

void MainWindow::resumeRun(const QString& runDirectory) {
    if (controller_->isRunning()) {
        showError(tr("Resume"), tr("A run is training already: stop it first."));
        return;
    }
    try {
        liveRun_->loadEventsFile(runDirectory);
        train_->dashboard()->showFailure({}, {});
        controller_->resume(runDirectory);
    } catch (const Error& error) {
        showError(tr("Resume"), QString::fromStdString(error.what()));
        return;
    }
    showArea(Area::Train);
}

bool MainWindow::openRunInHistory(const QString& runDirectory, bool quiet) {
    try {
        const int skipped = historyRun_->loadEventsFile(runDirectory);
        historyDashboard_->setComparison(nullptr);
        if (skipped > 0)
            statusBar()->showMessage(tr("%n line(s) of the event log could not be read and were skipped", nullptr, skipped),
                                     statusMessageMs);
    } catch (const Error& error) {
        if (!quiet) showError(tr("Open run"), QString::fromStdString(error.what()));
        return false;
    }
    showArea(Area::History);
    history_->selectRun(runDirectory);
    return true;
}

void MainWindow::compareRuns(const QString& first, const QString& second) {
    try {
        historyRun_->loadEventsFile(first);
        comparisonRun_->loadEventsFile(second);
        historyDashboard_->setComparison(comparisonRun_);
    } catch (const Error& error) {
        showError(tr("Compare runs"), QString::fromStdString(error.what()));
    }
}

void MainWindow::showError(const QString& title, const QString& message) {
    QMessageBox::warning(this, title, message);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!closeAfterStop_ && !maybeSave()) {
        event->ignore();
        return;
    }
    if (controller_->isRunning()) {
        if (!closeAfterStop_) {
            const auto answer = QMessageBox::question(
                this, tr("A run is training"),
                tr("Stop the run (it writes a checkpoint, so it can be resumed) and quit when it has stopped?"));
            if (answer == QMessageBox::Yes) {
                closeAfterStop_ = true;
                controller_->stop();
                statusBar()->showMessage(tr("Stopping the run; CNN Studio closes when it has stopped…"));
            }
        }
        event->ignore();
        return;
    }
    saveSettings();
    event->accept();
}

}  // namespace cnnstudio::ui
