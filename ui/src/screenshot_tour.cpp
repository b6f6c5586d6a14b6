#include "cnnstudio/ui/screenshot_tour.h"

#include <functional>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QPixmap>
#include <QTabWidget>
#include <QThread>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/designer/design_area.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "cnnstudio/ui/designer/designer_view.h"
#include "cnnstudio/ui/history/run_history_area.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#include "cnnstudio/ui/main_window.h"
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

}  // namespace

QPalette darkPalette() {
    QPalette palette;
    const QColor window(45, 45, 48), base(30, 30, 32), text(230, 230, 230), disabled(128, 128, 128);
    palette.setColor(QPalette::Window, window);
    palette.setColor(QPalette::WindowText, text);
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::AlternateBase, QColor(40, 40, 43));
    palette.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
    palette.setColor(QPalette::ToolTipText, text);
    palette.setColor(QPalette::PlaceholderText, QColor(160, 160, 165));
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::Button, QColor(55, 55, 58));
    palette.setColor(QPalette::ButtonText, text);
    palette.setColor(QPalette::BrightText, QColor(255, 90, 90));
    palette.setColor(QPalette::Light, QColor(75, 75, 80));
    palette.setColor(QPalette::Midlight, QColor(62, 62, 66));
    palette.setColor(QPalette::Mid, QColor(85, 85, 90));
    palette.setColor(QPalette::Dark, QColor(25, 25, 27));
    palette.setColor(QPalette::Shadow, QColor(10, 10, 10));
    palette.setColor(QPalette::Highlight, QColor(42, 130, 218));
    palette.setColor(QPalette::HighlightedText, Qt::white);
    palette.setColor(QPalette::Link, QColor(90, 160, 255));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        palette.setColor(QPalette::Disabled, role, disabled);
    return palette;
}

QStringList saveScreenshots(MainWindow& window, const QString& directory) {
    if (!QDir().mkpath(directory))
        throw Error("cannot create the screenshot folder", directory.toStdString());
    window.resize(1440, 900);
    window.show();
    settle();

    // The newest runs of the runs folder feed the dashboard and the comparison.
    RunHistoryArea* history = window.historyArea();
    waitUntil([&] { return !history->panel()->isScanning(); }, loadTimeoutMs);
    const QList<RunRecord> records = history->panel()->records();
    DatasetPicker* datasets = window.trainArea()->settingsPanel()->datasetPicker();
    waitUntil([&] { return !datasets->isLoadingPreview(); }, loadTimeoutMs);

    QStringList files;
    const QPalette light = QApplication::palette();
    for (const bool dark : {false, true}) {
        QApplication::setPalette(dark ? darkPalette() : light);
        const QString suffix = dark ? QStringLiteral("-dark") : QString();

        window.showArea(MainWindow::Area::Design);
        DesignArea* design = window.designArea();
        design->view()->fitToContents();
        for (const NodeSpec& node : window.document()->spec().nodes)
            if (node.type == "Conv2D") {
                design->canvas()->selectNode(QString::fromStdString(node.name));
                break;
            }
        files << grabTo(window, directory, "designer" + suffix);

        TrainingRun* liveRun = window.trainingSession()->liveRun();
        liveRun->clear();
        window.showArea(MainWindow::Area::Train);
        QTabWidget* pages = window.trainArea()->settingsPanel()->pages();
        if (!dark) {  // plain widgets: the light pictures say all
            pages->setCurrentIndex(2);
            files << grabTo(window, directory, "run-settings-hardware");
            pages->setCurrentIndex(0);
            files << grabTo(window, directory, "run-settings");
        }

        if (!records.isEmpty()) {
            // The newest run that completed shows best; the next one is compared with it.
            qsizetype shown = 0;
            for (qsizetype i = 0; i < records.size(); ++i)
                if (records[i].status == QObject::tr("completed")) {
                    shown = i;
                    break;
                }
            const QString run = records[shown].directory;
            liveRun->loadEventsFile(run);
            window.trainArea()->dashboard()->refreshNow();
            files << grabTo(window, directory, "training-dashboard" + suffix);
            window.openRunInHistory(run, true);
            if (records.size() >= 2) {
                const QString other = records[shown == 0 ? 1 : 0].directory;
                history->panel()->selectRuns({run, other});
                history->compareRuns(run, other);
            }
            history->dashboard()->refreshNow();
            files << grabTo(window, directory, "run-history" + suffix);
        }
    }
    QApplication::setPalette(light);
    return files;
}

}  // namespace cnnstudio::ui
