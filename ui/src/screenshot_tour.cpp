#include "cnnstudio/ui/screenshot_tour.h"

#include <functional>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QFileInfo>
#include <QPixmap>
#include <QSize>
#include <QMenuBar>
#include <QTabWidget>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QThread>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/common/theme.h"
#include "cnnstudio/ui/designer/design_area.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "cnnstudio/ui/designer/designer_view.h"
#include "cnnstudio/ui/hardware/hardware_area.h"
#include "cnnstudio/ui/hardware/hardware_comparison.h"
#include "cnnstudio/ui/hardware/sweep_planner.h"
#include "cnnstudio/ui/history/classify_image_dialog.h"
#include "cnnstudio/ui/history/run_history_area.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#if CNNSTUDIO_HAVE_LIVE
#include "cnnstudio/ui/live/live_demo_area.h"
#include "cnnstudio/ui/live/live_frame_view.h"
#endif
#include "cnnstudio/ui/main_window.h"
#include "cnnstudio/ui/manual_dialog.h"
#include "cnnstudio/ui/shortcuts_dialog.h"
#include "cnnstudio/ui/training/dataset_picker.h"
#include "cnnstudio/ui/training/run_settings_panel.h"
#include "cnnstudio/ui/training/train_area.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_run.h"
#include "cnnstudio/ui/training/training_session.h"

namespace cnnstudio::ui {
namespace {

constexpr int loadTimeoutMs = 120000;

// Lets the event loop run (background loads report through it) until `done` or the timeout.
bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!done()) {
        if (clock.elapsed() > timeoutMs) return false;
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(10);
    }
    return true;
}

void settle() {
    for (int i = 0; i < 5; ++i) {
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(20);
    }
}

QString grabTo(QWidget& widget, const QString& directory, const QString& name) {
    settle();
    const QString file = QDir(directory).filePath(name + ".png");
    if (!widget.grab().save(file, "PNG"))
        throw Error("could not write the screenshot", file.toStdString(), "check that the folder is writable");
    return file;
}

// The window sizes every page is shown at: the smallest the layout supports, and full HD.
const QSize windowSizes[] = {{1024, 700}, {1920, 1080}};

// One picture of the tour: its file name (without size and palette) and how to bring the window
// there. `prepare` returns false when there is nothing to show (no recorded runs, say).
struct TourShot {
    QString name;
    std::function<bool()> prepare;
    bool alsoDark = true;       // plain widgets say all in the light palette
    QWidget* dialog = nullptr;  // a dialog of the window to grab instead of it, hidden afterwards
};

// A training image of the chosen data set, as a file to classify in the Classify dialog's shot.
QString sampleImageFile(MainWindow& window, const QString& directory) {
    const DatasetSummary& data = window.trainArea()->settingsPanel()->datasetPicker()->preview()->summary();
    if (data.samples.isEmpty() || data.samples.first().isEmpty()) return {};
    const QString file = QDir(directory).filePath("sample.png");
    return data.samples.first().first().scaled(96, 96).save(file) ? file : QString();
}

#if CNNSTUDIO_HAVE_LIVE
// Frames for the Live demo's picture: the face of opencv-doc's photograph (40x40 pixels at
// (225, 91) of 548x342), enlarged to the size of a face before a webcam on a 640x480 frame,
// moving a little, twelve times. Nothing is written where opencv-doc is missing.
void writeWebcamLikeFrames(const QString& folder) {
    const QImage photo(QStringLiteral("/usr/share/doc/opencv-doc/examples/data/messi5.jpg"));
    if (photo.isNull() || !QDir().mkpath(folder)) return;
    const QImage face = photo.copy(150, 30, 200, 170).scaled(500, 425, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    for (int i = 0; i < 12; ++i) {
        QImage frame(640, 480, QImage::Format_RGB888);
        frame.fill(QColor(90, 90, 90));
        QPainter painter(&frame);
        painter.drawImage(QPoint(70 + 2 * i, 30 + i), face);
        painter.end();
        frame.save(QDir(folder).filePath(QStringLiteral("frame-%1.png").arg(i, 2, 10, QLatin1Char('0'))));
    }
}
#endif

// The pictures, in order. Add a page's shots as one block here.
QList<TourShot> tourShots(MainWindow& window, const QList<RunRecord>& records, const QString& scratch) {
    RunHistoryArea* history = window.historyArea();
    TrainingRun* liveRun = window.trainingSession()->liveRun();
    QTabWidget* settingsPages = window.trainArea()->settingsPanel()->pages();
    // The newest run that completed shows best; the others are compared with it.
    QString shownRun;
    QStringList comparedRuns;
    for (const RunRecord& record : records)
        if (shownRun.isEmpty() && record.status == QObject::tr("completed")) shownRun = record.directory;
    if (shownRun.isEmpty() && !records.isEmpty()) shownRun = records.first().directory;
    for (const RunRecord& record : records) comparedRuns << record.directory;

    QList<TourShot> shots;
    // The Design page: the whole network fitted in the view, then its per-layer analysis.
    auto showDesignFitted = [&window] {
        window.showArea(MainWindow::Area::Design);
        DesignArea* design = window.designArea();
        design->showProblems();
        for (const NodeSpec& node : window.document()->spec().nodes)
            if (node.type == "Conv2D") {
                design->canvas()->selectNode(QString::fromStdString(node.name));
                break;
            }
        settle();  // the view takes its final size (the inspector shows the layer) before it fits
        design->view()->fitToContents();
        return design;
    };
    shots << TourShot{"designer", [showDesignFitted] {
        showDesignFitted();
        return true;
    }};
    shots << TourShot{"designer-analysis", [showDesignFitted] {
        DesignArea* design = showDesignFitted();
        design->showAnalysis();
        settle();
        design->view()->fitToContents();
        return true;
    }};

    shots << TourShot{"run-settings", [&window, liveRun, settingsPages] {
        liveRun->clear();
        window.showArea(MainWindow::Area::Train);
        settingsPages->setCurrentIndex(0);
        return true;
    }, false};
    shots << TourShot{"run-settings-training", [&window, settingsPages] {
        window.showArea(MainWindow::Area::Train);
        settingsPages->setCurrentIndex(1);
        return true;
    }, false};
    shots << TourShot{"run-settings-hardware", [&window, settingsPages] {
        window.showArea(MainWindow::Area::Train);
        settingsPages->setCurrentIndex(2);
        return true;
    }, false};
    shots << TourShot{"training-dashboard", [&window, liveRun, settingsPages, shownRun] {
        if (shownRun.isEmpty()) return false;
        window.showArea(MainWindow::Area::Train);
        settingsPages->setCurrentIndex(1);
        liveRun->loadEventsFile(shownRun);
        window.trainArea()->dashboard()->refreshNow();
        return true;
    }};
    shots << TourShot{"run-history", [&window, history, shownRun] {
        if (shownRun.isEmpty()) return false;
        window.openRunInHistory(shownRun, true);
        history->dashboard()->refreshNow();
        return true;
    }};
    shots << TourShot{"run-history-compare", [&window, history, comparedRuns] {
        if (comparedRuns.size() < 2) return false;
        window.showArea(MainWindow::Area::History);
        history->panel()->selectRuns(comparedRuns);
        history->compareRuns(comparedRuns);
        history->dashboard()->refreshNow();
        return true;
    }};

    // The Hardware page with the report(s) given by --hardware-report: the speedup, scaling and
    // time-breakdown charts.
    shots << TourShot{"hardware-comparison", [&window] {
        HardwareArea* hardware = window.hardwareArea();
        if (hardware->comparison()->isEmpty()) return false;
        window.showArea(MainWindow::Area::Hardware);
        hardware->views()->setCurrentIndex(0);
        hardware->planner()->chooseDesignedNetwork();  // the network on the Design page, as trained
        return true;
    }};
#if CNNSTUDIO_HAVE_LIVE
    // The Live demo on a real face (opencv-doc's photograph) with Grad-CAM, by a shipped model,
    // else by the newest run that left a model.
    QString liveModel;
    if (const QStringList shipped = LiveDemoArea::shippedModels(); !shipped.isEmpty()) liveModel = shipped.front();
    for (const RunRecord& record : records)
        if (liveModel.isEmpty() && QFileInfo::exists(QDir(record.directory).filePath("model/model.json")))
            liveModel = QDir(record.directory).filePath("model");
    const QString faces = QDir(scratch).filePath("live-faces");
    if (!liveModel.isEmpty()) writeWebcamLikeFrames(faces);
    shots << TourShot{"live-demo", [&window, liveModel, faces] {
        LiveDemoArea* live = window.liveArea();
        if (liveModel.isEmpty() || QDir(faces).isEmpty()) return false;
        window.showArea(MainWindow::Area::Live);
        if (live->view()->frame().isNull()) {
            live->chooseSource("folder:" + faces);
            live->chooseModel(liveModel);
            live->setGradCam(true);
            live->setPaceToSourceRate(false);
            live->start();
            waitUntil([live] { return !live->session()->isRunning(); }, loadTimeoutMs);
            settle();
        }
        return !live->view()->frame().isNull();
    }};
#endif

    auto* classify = new ClassifyImageDialog(records, QString(), &window);
    shots << TourShot{"classify-image", [&window, classify, scratch] {
        // A training image of the data set on show, classified by the first run with a model.
        const QString sample = classify->shownScores().isEmpty() ? sampleImageFile(window, scratch) : QString();
        if (classify->runCount() > 0 && !sample.isEmpty()) {
            classify->setImage(sample);
            classify->classify();
            waitUntil([classify] { return !classify->classifier()->isRunning(); }, loadTimeoutMs);
        }
        classify->show();
        return true;
    }, true, classify};
    auto* shortcuts = new ShortcutsDialog(window.menuBar(), &window);
    shots << TourShot{"keyboard-shortcuts", [shortcuts] {
        shortcuts->show();
        return true;
    }, false, shortcuts};
    auto* manual = new ManualDialog(&window);
    shots << TourShot{"manual", [manual] {
        manual->show();
        return true;
    }, false, manual};
    return shots;
}

}  // namespace

QStringList saveScreenshots(MainWindow& window, const QString& directory) {
    if (!QDir().mkpath(directory))
        throw Error("cannot create the screenshot folder", directory.toStdString());
    window.resize(windowSizes[0]);
    window.show();
    settle();

    // The runs of the runs folder feed the dashboard and the comparison.
    RunHistoryArea* history = window.historyArea();
    waitUntil([&] { return !history->panel()->isScanning(); }, loadTimeoutMs);
    DatasetPicker* datasets = window.trainArea()->settingsPanel()->datasetPicker();
    waitUntil([&] { return !datasets->isLoadingPreview(); }, loadTimeoutMs);
    QTemporaryDir scratch;
    const QList<TourShot> shots = tourShots(window, history->panel()->records(), scratch.path());

    QStringList files;
    for (const QSize& size : windowSizes) {
        window.resize(size);
        const QString sizeName = QStringLiteral("-%1x%2").arg(size.width()).arg(size.height());
        for (const bool dark : {false, true}) {
            applyTheme(dark ? Theme::Dark : Theme::Light);
            for (const TourShot& shot : shots) {
                // A shot shows its own page's messages, not what the one before left there (the
                // live demo's last message names a scratch folder).
                window.statusBar()->clearMessage();
                if ((dark && !shot.alsoDark) || !shot.prepare()) continue;
                QWidget& shown = shot.dialog ? *shot.dialog : static_cast<QWidget&>(window);
                files << grabTo(shown, directory, shot.name + sizeName + (dark ? "-dark" : ""));
                if (shot.dialog) shot.dialog->hide();
            }
        }
    }
    applyTheme(Theme::Light);
    return files;
}

}  // namespace cnnstudio::ui
