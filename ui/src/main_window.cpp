#include "cnnstudio/ui/main_window.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/common/onnx_exchange.h"
#include "cnnstudio/ui/common/theme.h"
#include "cnnstudio/ui/designer/design_area.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "cnnstudio/ui/designer/designer_view.h"
#include "cnnstudio/ui/hardware/hardware_area.h"
#include "cnnstudio/ui/hardware/sweep_plan.h"
#include "cnnstudio/ui/hardware/sweep_planner.h"
#include "cnnstudio/ui/history/classify_image_dialog.h"
#include "cnnstudio/ui/history/run_history_area.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#if CNNSTUDIO_HAVE_LIVE
#include "cnnstudio/ui/live/live_demo_area.h"
#endif
#include "cnnstudio/ui/manual_dialog.h"
#include "cnnstudio/ui/shortcuts_dialog.h"
#include "cnnstudio/ui/training/run_settings_panel.h"
#include "cnnstudio/ui/training/train_area.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "action_icons.h"

namespace cnnstudio::ui {
namespace {

constexpr int maximumRecentFiles = 8;
constexpr const char* startingPreset = "fer-cnn";
constexpr int statusMessageMs = 6000;
// QStatusBar draws its message 6 pixels in from the left and stops short of the permanent widgets.
constexpr int statusMessageMarginPx = 12;

QIcon themedIcon(const char* themeName, QStyle::StandardPixmap fallback, const QStyle* style) {
    return QIcon::fromTheme(QString::fromLatin1(themeName), style->standardIcon(fallback));
}

}  // namespace

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent), persistSettings_(options.persistSettings) {
    setObjectName("mainWindow");
    document_ = new DesignDocument(this);
    session_ = new TrainingSession(this);

    design_ = new DesignArea(document_, this);
    train_ = new TrainArea(session_, this);
    history_ = new RunHistoryArea(this);
    hardware_ = new HardwareArea(this);

    tabs_ = new QTabWidget(this);
    tabs_->setObjectName("areas");
    tabs_->setDocumentMode(true);
    tabs_->addTab(design_, tr("Design"));
    tabs_->addTab(train_, tr("Train"));
    tabs_->addTab(history_, tr("Run history"));
    tabs_->addTab(hardware_, tr("Hardware"));
#if CNNSTUDIO_HAVE_LIVE
    live_ = new LiveDemoArea(this);
    tabs_->addTab(live_, tr("Live demo"));
    connect(live_, &LiveDemoArea::message, this, &MainWindow::showStatus);
#endif
    setCentralWidget(tabs_);

    totals_ = new QLabel(this);
    totals_->setObjectName("totals");
    statusBar()->addPermanentWidget(totals_);
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString& message) {
        if (message.isEmpty()) statusBar()->setToolTip(QString());
    });

    createActions();
    createThemeClassifyAndHelpActions();
    createOnnxActions();
    createMenus();
    createToolBar();

    connect(design_, &DesignArea::message, this, &MainWindow::showStatus);
    connect(history_, &RunHistoryArea::message, this, &MainWindow::showStatus);
    connect(hardware_, &HardwareArea::message, this, &MainWindow::showStatus);
    connect(document_, &DesignDocument::analysisChanged, this, &MainWindow::refreshTotals);
    connect(train_, &TrainArea::networkFitChanged, this, &MainWindow::refreshTotals);
    connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::refreshTotals);
    connect(document_, &DesignDocument::analysisChanged, this, [this] { train_->setNetwork(document_->spec()); });
    // The Hardware page may sweep the Design page's network, as the Train page's run would train it.
    connect(train_, &TrainArea::networkFitChanged, this, [this] {
        hardware_->planner()->setDesignedNetwork(
            designedNetworkToSweep(document_->spec(), document_->report(), train_->networkFit()));
    });
    connect(document_, &DesignDocument::documentReset, this, &MainWindow::refreshTitle);
    connect(document_, &DesignDocument::filePathChanged, this, &MainWindow::refreshTitle);
    connect(document_, &DesignDocument::modifiedChanged, this, &MainWindow::refreshTitle);
    connect(train_, &TrainArea::trainRequested, this, &MainWindow::startTraining);
    connect(train_, &TrainArea::resumeRequested, this, &MainWindow::resumeRun);

    TrainingController* controller = session_->controller();
    connect(controller, &TrainingController::stateChanged, this, &MainWindow::refreshRunActions);
    connect(controller, &TrainingController::runStarted, this, [this](const QString& directory) {
        showStatus(tr("Training in %1").arg(directory));
        history_->runChanged(directory, true);
    });
    connect(controller, &TrainingController::runFinished, this, [this](const FinishedEvent& finished) {
        showStatus(tr("The run ended: %1").arg(QString::fromStdString(finished.reason)));
    });
    connect(controller, &TrainingController::runFailed, this, [this] { showStatus(tr("The run failed")); });
    connect(controller, &TrainingController::runKilled, this,
            [this] { showStatus(tr("You killed the run")); });
    // Run history reads the run again once its record on disk is complete.
    connect(session_, &TrainingSession::runEnded, this, [this](const QString& directory) {
        history_->runChanged(directory, false);
        hardware_->refreshRuns();  // a finished run adds its measured throughput
        if (closeAfterStop_) close();
    });
    connect(session_, &TrainingSession::message, this, &MainWindow::showStatus);
    connect(train_->dashboard(), &TrainingDashboard::message, this, &MainWindow::showStatus);

    RunHistoryPanel* runs = history_->panel();
    connect(runs, &RunHistoryPanel::resumeRequested, this, &MainWindow::resumeRun);
    connect(runs, &RunHistoryPanel::classifyRequested, this, &MainWindow::showClassifyDialog);
    connect(runs, &RunHistoryPanel::runsRootChanged, this, [this] {
        hardware_->setRunsRoot(history_->panel()->runsRoot());
#if CNNSTUDIO_HAVE_LIVE
        live_->setRunsRoot(history_->panel()->runsRoot());
#endif
        saveSettings();
    });

    restoreSettings(options);
    if (options.openFile.isEmpty() || !openFile(options.openFile)) newFromPreset(startingPreset);
    runs->refresh();
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
    // Every binding of the platform's Redo (QKeySequence(QKeySequence::Redo) keeps only the first:
    // Ctrl+Y here, which dropped Ctrl+Shift+Z), and Ctrl+Y on every platform.
    QList<QKeySequence> redoKeys = QKeySequence::keyBindings(QKeySequence::Redo);
    if (!redoKeys.contains(QKeySequence(Qt::CTRL | Qt::Key_Y))) redoKeys << QKeySequence(Qt::CTRL | Qt::Key_Y);
    redoAction_->setShortcuts(redoKeys);

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

    createDesignEditActions();

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
    showHardwareAction_ = new QAction(tr("Hard&ware"), this);
    showHardwareAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_4));
    connect(showHardwareAction_, &QAction::triggered, this, [this] { showArea(Area::Hardware); });
    if (live_) {
        showLiveAction_ = new QAction(tr("&Live demo"), this);
        showLiveAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_5));
        connect(showLiveAction_, &QAction::triggered, this, [this] { showArea(Area::Live); });
    }

    trainAction_ = new QAction(tr("&Train"), this);
    trainAction_->setShortcut(QKeySequence(Qt::Key_F5));
    trainAction_->setStatusTip(tr("Train this network with the settings of the Train page"));
    connect(trainAction_, &QAction::triggered, this, &MainWindow::startTraining);
    stopAction_ = new QAction(tr("&Stop"), this);
    stopAction_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
    stopAction_->setStatusTip(tr("Finish the current step, write a checkpoint and stop"));
    connect(stopAction_, &QAction::triggered, session_, &TrainingSession::stop);
    killAction_ = new QAction(tr("&Kill the worker"), this);
    killAction_->setStatusTip(tr("End the training process at once"));
    connect(killAction_, &QAction::triggered, train_, &TrainArea::killAfterAsking);

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

void MainWindow::createThemeClassifyAndHelpActions() {
    darkThemeAction_ = new QAction(tr("&Dark theme"), this);
    darkThemeAction_->setCheckable(true);
    darkThemeAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    darkThemeAction_->setStatusTip(tr("Switch between the light and the dark look"));
    connect(darkThemeAction_, &QAction::toggled, this, &MainWindow::setDarkTheme);

    classifyAction_ = new QAction(tr("&Classify an image…"), this);
    classifyAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    classifyAction_->setStatusTip(tr("Run a trained model on an image file and see its most likely classes"));
    connect(classifyAction_, &QAction::triggered, this, [this] {
        const QStringList selected = history_->panel()->selectedRunDirectories();
        showClassifyDialog(selected.isEmpty() ? QString() : selected.first());
    });

    shortcutsAction_ = new QAction(tr("&Keyboard shortcuts"), this);
    shortcutsAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
    connect(shortcutsAction_, &QAction::triggered, this, [this] { ShortcutsDialog(menuBar(), this).exec(); });
    manualAction_ = new QAction(tr("&Manual"), this);
    manualAction_->setShortcut(QKeySequence::HelpContents);
    connect(manualAction_, &QAction::triggered, this, [this] { ManualDialog(this).exec(); });
}

void MainWindow::createOnnxActions() {
    onnxExchange_ = new OnnxExchange(TrainingController::defaultWorkerProgram(), this);
    exportOnnxAction_ = new QAction(tr("Export &model as ONNX…"), this);
    exportOnnxAction_->setStatusTip(tr("Write a trained run's model as an ONNX file for other tools"));
    connect(exportOnnxAction_, &QAction::triggered, this, &MainWindow::chooseModelToExport);
    importOnnxAction_ = new QAction(tr("&Import ONNX model…"), this);
    importOnnxAction_->setStatusTip(tr("Make a model folder from an ONNX file and open its network here"));
    connect(importOnnxAction_, &QAction::triggered, this, &MainWindow::chooseOnnxToImport);

    connect(onnxExchange_, &OnnxExchange::failed, this,
            [this](const QString& reason) { showError(tr("ONNX"), reason); });
    connect(onnxExchange_, &OnnxExchange::finished, this, [this](const QString& written) {
        if (written.endsWith(".onnx")) {
            showStatus(tr("Exported the model to %1").arg(QDir::toNativeSeparators(written)));
        } else if (maybeSave() && openFile(QDir(written).filePath(RunFolder::kSpecFileName))) {
            showStatus(tr("Imported into %1; its weights are there too").arg(QDir::toNativeSeparators(written)));
        }
    });
}

// The run selected in Run history, or one the user picks; then where the ONNX file goes.
void MainWindow::chooseModelToExport() {
    const QStringList selected = history_->panel()->selectedRunDirectories();
    QString run = selected.isEmpty() ? QString() : selected.first();
    if (run.isEmpty())
        run = QFileDialog::getExistingDirectory(this, tr("Choose a trained run"), history_->panel()->runsRoot());
    if (run.isEmpty()) return;
    const QString suggested = QDir(run).absolutePath() + ".onnx";
    const QString file = QFileDialog::getSaveFileName(this, tr("Export model as ONNX"), suggested,
                                                      tr("ONNX models (*.onnx)"));
    if (!file.isEmpty()) onnxExchange_->exportModel(run, file.endsWith(".onnx") ? file : file + ".onnx");
}

// An ONNX file; its model folder goes beside it (name.onnx -> name/), unless that exists.
void MainWindow::chooseOnnxToImport() {
    const QString file = QFileDialog::getOpenFileName(this, tr("Import ONNX model"), history_->panel()->runsRoot(),
                                                      tr("ONNX models (*.onnx);;All files (*)"));
    if (file.isEmpty()) return;
    const QFileInfo info(file);
    QString folder = info.dir().filePath(info.completeBaseName());
    if (QFileInfo::exists(folder))
        folder = QFileDialog::getExistingDirectory(this, tr("Choose an empty folder for the imported model"),
                                                   info.absolutePath());
    if (!folder.isEmpty()) onnxExchange_->importModel(file, folder);
}

void MainWindow::setDarkTheme(bool dark) {
    applyTheme(dark ? Theme::Dark : Theme::Light);
    if (darkThemeAction_->isChecked() != dark) darkThemeAction_->setChecked(dark);
    saveSettings();
}

void MainWindow::showClassifyDialog(const QString& runDirectory) {
    ClassifyImageDialog dialog(history_->panel()->records(), runDirectory, this);
    dialog.exec();
}

// Copy, paste, duplicate and Analyze act on the canvas; their shortcuts live on the view so the
// text fields keep their own meaning of Ctrl+C and Ctrl+V.
void MainWindow::createDesignEditActions() {
    const QStyle* look = style();
    DesignerCanvas* canvas = design_->canvas();
    copyAction_ = new QAction(themedIcon("edit-copy", QStyle::SP_FileIcon, look), tr("&Copy"), this);
    copyAction_->setShortcut(QKeySequence::Copy);
    copyAction_->setStatusTip(tr("Copy the selected layers with the connections between them"));
    pasteAction_ = new QAction(themedIcon("edit-paste", QStyle::SP_FileIcon, look), tr("&Paste"), this);
    pasteAction_->setShortcut(QKeySequence::Paste);
    pasteAction_->setStatusTip(tr("Add the copied layers beside the ones they were copied from"));
    duplicateAction_ = new QAction(tr("D&uplicate"), this);
    duplicateAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    duplicateAction_->setStatusTip(tr("Copy the selected layers and paste them beside the originals"));
    for (QAction* action : {copyAction_, pasteAction_, duplicateAction_}) {
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        design_->view()->addAction(action);
    }
    connect(copyAction_, &QAction::triggered, canvas, &DesignerCanvas::copySelection);
    connect(pasteAction_, &QAction::triggered, canvas, &DesignerCanvas::paste);
    connect(duplicateAction_, &QAction::triggered, canvas, &DesignerCanvas::duplicateSelection);
    analyzeAction_ = new QAction(tr("&Analyze network"), this);
    analyzeAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    analyzeAction_->setStatusTip(tr("Per layer: output shape, parameters, FLOPs, activation memory and problems"));
    connect(analyzeAction_, &QAction::triggered, this, [this] {
        showArea(Area::Design);
        design_->showAnalysis();
    });
    connect(document_, &DesignDocument::networkNameChanged, this, &MainWindow::refreshTitle);
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
    file->addAction(exportOnnxAction_);
    file->addAction(importOnnxAction_);
    file->addSeparator();
    file->addAction(quitAction_);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(undoAction_);
    edit->addAction(redoAction_);
    edit->addSeparator();
    edit->addAction(deleteAction_);
    edit->addAction(selectAllAction_);
    edit->addSeparator();
    edit->addAction(copyAction_);
    edit->addAction(pasteAction_);
    edit->addAction(duplicateAction_);
    edit->addSeparator();
    edit->addAction(analyzeAction_);
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
    view->addAction(showHardwareAction_);
    if (showLiveAction_) view->addAction(showLiveAction_);

    view->addSeparator();
    view->addAction(darkThemeAction_);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(trainAction_);
    run->addAction(stopAction_);
    run->addAction(killAction_);
    run->addSeparator();
    run->addAction(classifyAction_);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(manualAction_);
    help->addAction(shortcutsAction_);
    help->addSeparator();
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
    // Undo and Redo name the step ("Undo Move conv1"): as text beside the icon the buttons would
    // change width and shift the rest of the toolbar with every edit. Icon only; the name is the tooltip.
    for (QAction* action : {undoAction_, redoAction_})
        if (auto* button = qobject_cast<QToolButton*>(bar->widgetForAction(action)))
            button->setToolButtonStyle(Qt::ToolButtonIconOnly);
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
        const bool dark = themeFromName(settings.value("view/theme").toString()) == Theme::Dark;
        const QSignalBlocker quiet(darkThemeAction_);  // applied here, saved when it changes
        darkThemeAction_->setChecked(dark);
        applyTheme(dark ? Theme::Dark : Theme::Light);
        // Hardware and hyper-parameters carry over; every session starts on the built-in data set.
        RunSettings run = RunSettings::fromVariantMap(settings.value("train/settings").toMap());
        run.dataset = RunSettings{}.dataset;
        train_->settingsPanel()->setSettings(run);
    }
    if (!options.runsRoot.isEmpty()) runsRoot = options.runsRoot;
    history_->panel()->setRunsRoot(runsRoot);
    hardware_->setRunsRoot(runsRoot);
    for (qsizetype i = 0; i < options.hardwareReports.size(); ++i) {
        const QString& report = options.hardwareReports[i];
        if (!(i == 0 ? hardware_->openReport(report, true) : hardware_->overlayReport(report, true)))
            showStatus(tr("Could not read the benchmark report %1").arg(report));
    }
#if CNNSTUDIO_HAVE_LIVE
    live_->setRunsRoot(runsRoot);
#endif
    refreshRecentMenu();
}

void MainWindow::saveSettings() const {
    if (!persistSettings_) return;
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("files/recent", recentFiles_);
    settings.setValue("runs/root", history_->panel()->runsRoot());
    settings.setValue("train/settings", train_->settingsPanel()->settings().toVariantMap());
    settings.setValue("view/theme", themeName(darkThemeAction_->isChecked() ? Theme::Dark : Theme::Light));
}

void MainWindow::showArea(Area area) {
    QWidget* page = nullptr;
    switch (area) {
    case Area::Design: page = design_; break;
    case Area::Train: page = train_; break;
    case Area::History: page = history_; break;
    case Area::Hardware: page = hardware_; break;
    case Area::Live: page = live_; break;  // null without OpenCV
    }
    if (page) tabs_->setCurrentWidget(page);
}

QString MainWindow::totalsText() const { return totals_->text(); }

void MainWindow::refreshTotals() {
    auto totalsOf = [](const ShapeReport& report) {
        return tr("%1 parameters · %2 per image · %3 of activations per image")
            .arg(formatCount(report.totalParameters), formatFlops(report.totalForwardFlops),
                 formatBytes(report.activationBytesPerImage));
    };
    const ShapeReport& drawn = document_->report();
    QString drawnText = totalsOf(drawn);
    if (!drawn.ok()) drawnText += tr(" · %n problem(s)", nullptr, int(drawn.problems.size()));
    // On the Train page the totals are those of the copy the run trains, when fitting the drawn
    // network to the data set changes it (fer-cnn on Fashion-MNIST: 1.74 M parameters, not 3.51 M).
    const NetworkFit fit = train_->networkFit();
    if (tabs_->currentWidget() == train_ && fit.known && fit.canTrain() && fit.adapted()) {
        totals_->setText(tr("As trained on %1: %2").arg(fit.datasetName, totalsOf(fit.fitted)));
        totals_->setToolTip(tr("As drawn on the Design page: %1").arg(drawnText));
    } else {
        totals_->setText(drawnText);
        totals_->setToolTip(tr("The network on the Design page"));
    }
}

void MainWindow::refreshTitle() {
    const QString name = QString::fromStdString(document_->spec().name);
    const QString file = document_->filePath();
    setWindowTitle(file.isEmpty() ? tr("%1[*] — CNN Studio").arg(name)
                                  : tr("%1 (%2)[*] — CNN Studio").arg(name, QFileInfo(file).fileName()));
    setWindowModified(document_->isModified());
}

void MainWindow::refreshRunActions() {
    const bool running = session_->isRunning();
    const bool stopping = session_->controller()->state() == TrainingController::State::Stopping;
    trainAction_->setEnabled(!running);
    stopAction_->setEnabled(running && !stopping);
    killAction_->setEnabled(running);
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
        showStatus(tr("Saved %1").arg(document_->filePath()));
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
        showStatus(tr("Saved %1").arg(path));
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
        showStatus(tr("Exported %1").arg(path));
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
    if (session_->isRunning()) {
        showArea(Area::Train);
        showStatus(tr("A run is training already: stop it first."));
        return;
    }
    const auto refusal = session_->start(train_->settingsForRun(), document_->spec(), document_->report(),
                                         train_->networkFit(), history_->panel()->runsRoot());
    if (refusal) {
        showRefusal(*refusal);
        return;
    }
    saveSettings();
    showArea(Area::Train);
}

void MainWindow::resumeRun(const QString& runDirectory) {
    if (const auto refusal = session_->resume(runDirectory)) {
        showRefusal(*refusal);
        return;
    }
    showArea(Area::Train);
}

bool MainWindow::openRunInHistory(const QString& runDirectory, bool quiet) {
    if (!history_->openRun(runDirectory, quiet)) return false;
    showArea(Area::History);
    return true;
}

void MainWindow::showRefusal(const TrainingSession::Refusal& refusal) {
    if (refusal.fixOn == TrainingSession::Refusal::Page::Design) showArea(Area::Design);
    if (refusal.fixOn == TrainingSession::Refusal::Page::Train) showArea(Area::Train);
    showError(refusal.title, refusal.message);
}

void MainWindow::showError(const QString& title, const QString& message) {
    QMessageBox::warning(this, title, message);
}

void MainWindow::showStatus(const QString& text) {
    // QStatusBar cuts a long message off under the permanent totals; elided, it ends in "…",
    // and the whole message is the status bar's tooltip while it shows.
    QStatusBar* bar = statusBar();
    const int room = (totals_->isVisible() ? totals_->geometry().left() : bar->width()) - statusMessageMarginPx;
    const QString shown = bar->fontMetrics().elidedText(text, Qt::ElideRight, std::max(room, 0));
    bar->setToolTip(shown == text ? QString() : text);
    bar->showMessage(shown, statusMessageMs);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!closeAfterStop_ && !maybeSave()) {
        event->ignore();
        return;
    }
    if (session_->isRunning()) {
        if (!closeAfterStop_) {
            const auto answer = QMessageBox::question(
                this, tr("A run is training"),
                tr("Stop the run (it writes a checkpoint, so it can be resumed) and quit when it has stopped?"));
            if (answer == QMessageBox::Yes) {
                closeAfterStop_ = true;
                session_->stop();
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
