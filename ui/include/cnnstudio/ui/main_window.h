// MainWindow: CNN Studio's window, a shell around its pages — the Design page (DesignArea), the
// Train page (TrainArea, driving the TrainingSession), Run history (RunHistoryArea) and the
// Hardware page (HardwareArea, benchmark sweeps and their charts) — with
// menus, a toolbar, keyboard shortcuts and a status bar showing the network's totals. It owns
// the network file (open, save, recent files) and wires the pages together; what a page does
// lives in the page. Window state, recent files, the runs folder, the run settings and the light
// or dark theme are kept in QSettings. It starts with the fer-cnn preset and the built-in Fashion-MNIST selected.
#pragma once

#include <QMainWindow>
#include <QStringList>

#include "cnnstudio/ui/training/training_session.h"

class QAction;
class QLabel;
class QMenu;
class QTabWidget;

namespace cnnstudio::ui {

class DesignArea;
class LiveDemoArea;
class DesignDocument;
class HardwareArea;
class OnnxExchange;
class RunHistoryArea;
class TrainArea;

struct MainWindowOptions {
    QString openFile;          // a spec to open instead of the fer-cnn preset
    QString runsRoot;          // overrides the saved runs folder for this session
    QStringList hardwareReports;  // benchmark reports shown on the Hardware page, the rest overlaid on the first
    bool persistSettings = true;  // false: read nothing from and write nothing to QSettings
};

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    enum class Area { Design, Train, History, Hardware, Live };  // in tab order

    explicit MainWindow(const MainWindowOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    DesignDocument* document() const { return document_; }
    DesignArea* designArea() const { return design_; }
    TrainArea* trainArea() const { return train_; }
    RunHistoryArea* historyArea() const { return history_; }
    HardwareArea* hardwareArea() const { return hardware_; }
    // The Live demo page; null in a build without OpenCV (no libcnnlive).
    LiveDemoArea* liveArea() const { return live_; }
    TrainingSession* trainingSession() const { return session_; }
    void showArea(Area area);
    // The status bar's totals: of the Design page's network, or on the Train page of the copy
    // the run trains when the data set changes it (its tooltip then gives the drawn one's).
    QString totalsText() const;

    // Opens a recorded run in Run history (replaying its events) and shows that page. False,
    // with a message box unless quiet, when it cannot be read.
    bool openRunInHistory(const QString& runDirectory, bool quiet = false);

public slots:
    void newNetwork();
    void newFromPreset(const QString& name);
    bool openFile(const QString& path);  // false, after a message box, when it cannot be read
    void startTraining();

protected:
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;  // a light/dark switch redraws the painted icons

private:
    void createActions();
    // The View menu's theme switch, Run ▸ Classify an image and the Help pages.
    void createThemeClassifyAndHelpActions();
    void setDarkTheme(bool dark);
    void showClassifyDialog(const QString& runDirectory);
    void createDesignEditActions();
    // File ▸ Export model as ONNX and File ▸ Import ONNX model, done by the worker.
    void createOnnxActions();
    void chooseModelToExport();
    void chooseOnnxToImport();
    void refreshPaintedIcons();
    void createMenus();
    void createToolBar();
    void restoreSettings(const MainWindowOptions& options);
    void saveSettings() const;
    bool maybeSave();
    bool save();
    bool saveAs();
    void chooseFileToOpen();
    void exportDiagram(const QString& format);
    void addRecentFile(const QString& path);
    void refreshRecentMenu();
    void refreshTitle();
    void refreshTotals();
    void refreshRunActions();
    void resumeRun(const QString& runDirectory);
    void showRefusal(const TrainingSession::Refusal& refusal);
    void showError(const QString& title, const QString& message);
    void showStatus(const QString& text);

    bool persistSettings_;
    DesignDocument* document_;
    TrainingSession* session_;
    DesignArea* design_;
    TrainArea* train_;
    RunHistoryArea* history_;
    HardwareArea* hardware_;
    LiveDemoArea* live_ = nullptr;
    QTabWidget* tabs_;
    QLabel* totals_;
    QMenu* recentMenu_ = nullptr;
    QStringList recentFiles_;
    bool closeAfterStop_ = false;

    QAction* newAction_ = nullptr;
    QAction* openAction_ = nullptr;
    QAction* saveAction_ = nullptr;
    QAction* saveAsAction_ = nullptr;
    QAction* exportPngAction_ = nullptr;
    QAction* exportSvgAction_ = nullptr;
    QAction* exportOnnxAction_ = nullptr;
    QAction* importOnnxAction_ = nullptr;
    OnnxExchange* onnxExchange_ = nullptr;
    QAction* quitAction_ = nullptr;
    QAction* undoAction_ = nullptr;
    QAction* redoAction_ = nullptr;
    QAction* deleteAction_ = nullptr;
    QAction* selectAllAction_ = nullptr;
    QAction* autoLayoutAction_ = nullptr;
    QAction* zoomInAction_ = nullptr;
    QAction* zoomOutAction_ = nullptr;
    QAction* zoomResetAction_ = nullptr;
    QAction* fitAction_ = nullptr;
    QAction* showDesignAction_ = nullptr;
    QAction* showTrainAction_ = nullptr;
    QAction* showHistoryAction_ = nullptr;
    QAction* showHardwareAction_ = nullptr;
    QAction* showLiveAction_ = nullptr;
    QAction* trainAction_ = nullptr;
    QAction* stopAction_ = nullptr;
    QAction* killAction_ = nullptr;
    QAction* aboutAction_ = nullptr;
    QAction* darkThemeAction_ = nullptr;
    QAction* classifyAction_ = nullptr;
    QAction* shortcutsAction_ = nullptr;
    QAction* manualAction_ = nullptr;
    // The Design page's clipboard and analysis.
    QAction* copyAction_ = nullptr;
    QAction* pasteAction_ = nullptr;
    QAction* duplicateAction_ = nullptr;
    QAction* analyzeAction_ = nullptr;
};

}  // namespace cnnstudio::ui
