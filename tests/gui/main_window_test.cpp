// The main window as a user first sees it: the fer-cnn preset on the Design page, the built-in
// Fashion-MNIST chosen on the Train page, the totals in the status bar, the four areas.
#include <algorithm>
#include <cmath>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTabWidget>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include "cnnstudio/spec.h"
#include "cnnstudio/ui/common/theme.h"
#include "cnnstudio/ui/designer/design_area.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/inspector_panel.h"
#include "cnnstudio/ui/history/run_history_area.h"
#include "cnnstudio/ui/history/run_history_panel.h"
#include "cnnstudio/ui/main_window.h"
#include "cnnstudio/ui/manual_dialog.h"
#include "cnnstudio/ui/shortcuts_dialog.h"
#include "cnnstudio/ui/training/run_settings_panel.h"
#include "cnnstudio/ui/training/train_area.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_dashboard.h"
#include "cnnstudio/ui/training/training_run.h"
#include "cnnstudio/ui/training/training_session.h"
#include "gui_tests.h"

using cnnstudio::ui::MainWindow;

class MainWindowTest : public QObject {
    Q_OBJECT

private slots:
    void startsWithFerCnnAndTheBuiltInDataSet() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = cnnstudio::ui::tests::testDataPath("runs");
        MainWindow window(options);
        QCOMPARE(QString::fromStdString(window.document()->spec().name), QString("fer-cnn"));
        QVERIFY(window.document()->report().ok());
        QCOMPARE(window.trainArea()->settingsPanel()->settings().dataset, QString("fashion-mnist"));
        QVERIFY2(window.totalsText().contains("parameters"), qPrintable(window.totalsText()));

        auto* areas = window.findChild<QTabWidget*>("areas");
        QVERIFY(areas);
        QStringList titles;
        for (int i = 0; i < areas->count(); ++i) titles << areas->tabText(i);
        QStringList expected = {"Design", "Train", "Run history", "Hardware"};
        if (window.liveArea()) expected << "Live demo";  // in builds with OpenCV (libcnnlive)
        QCOMPARE(titles, expected);
        QCOMPARE(window.historyArea()->panel()->runsRoot(), options.runsRoot);
    }

    // Audit item 8: on the Train page the totals are those of the network the run trains (fer-cnn
    // fitted to Fashion-MNIST, as the worker's log gives them), said so; elsewhere the drawn one's.
    void theTrainPageTotalsDescribeTheNetworkTheRunTrains() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = cnnstudio::ui::tests::testDataPath("runs");
        MainWindow window(options);
        QTRY_VERIFY_WITH_TIMEOUT(window.trainArea()->networkFit().known, 120000);
        QVERIFY2(window.totalsText().startsWith("3.51 M parameters · 689 MFLOPs"), qPrintable(window.totalsText()));
        window.showArea(MainWindow::Area::Train);
        QVERIFY2(window.totalsText().startsWith("As trained on Fashion-MNIST: 1.74 M parameters · 234 MFLOPs"),
                 qPrintable(window.totalsText()));
        auto* totals = window.findChild<QLabel*>("totals");
        QVERIFY2(totals->toolTip().contains("As drawn on the Design page: 3.51 M parameters"),
                 qPrintable(totals->toolTip()));
        window.showArea(MainWindow::Area::Design);
        QVERIFY2(window.totalsText().startsWith("3.51 M parameters"), qPrintable(window.totalsText()));
    }

    // Audit item 18: a status message too long for the room left of the permanent totals is
    // elided there, whole in the tooltip, instead of running under the totals.
    void aLongStatusMessageStopsShortOfTheTotals() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        MainWindow window(options);
        window.resize(1024, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QString longMessage =
            "/tmp/specs: neither a model folder (model.json), a finished run folder nor a shipped model (choose a "
            "shipped model, a finished run's folder or a model folder (one holding model.json) in the Model list)";
        emit window.designArea()->message(longMessage);
        QStatusBar* bar = window.statusBar();
        auto* totals = bar->findChild<QLabel*>("totals");
        QVERIFY(totals && totals->isVisible());
        const QString shown = bar->currentMessage();
        QVERIFY2(shown.endsWith(QChar(0x2026)), qPrintable(shown));
        QVERIFY(bar->fontMetrics().horizontalAdvance(shown) < totals->geometry().left());
        QCOMPARE(bar->toolTip(), longMessage);
    }

    // Ctrl+Z and Ctrl+Shift+Z typed in the inspector undo and redo the design (audit item 10:
    // the focused field claimed them and nothing happened); a value still being typed is
    // committed first, so the undo takes it back.
    void undoKeysInTheInspectorUndoTheDesign() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = cnnstudio::ui::tests::testDataPath("runs");
        MainWindow window(options);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        cnnstudio::ui::DesignDocument* document = window.document();
        QString conv;
        for (const cnnstudio::NodeSpec& node : document->spec().nodes)
            if (node.type == "Conv2D" && conv.isEmpty()) conv = QString::fromStdString(node.name);
        cnnstudio::ui::InspectorPanel* inspector = window.designArea()->inspector();
        inspector->setNode(conv);

        QLineEdit* name = inspector->nameEditor();
        name->setFocus();
        QVERIFY(name->hasFocus());
        name->selectAll();
        QTest::keyClicks(name, "first_conv");
        QTest::keyClick(name, Qt::Key_Return);
        QVERIFY(document->hasNode("first_conv"));
        QTest::keyClick(name, Qt::Key_Z, Qt::ControlModifier);
        QVERIFY2(document->hasNode(conv), "Ctrl+Z in the name field should undo the rename");
        QCOMPARE(name->text(), conv);
        QTest::keyClick(name, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QVERIFY2(document->hasNode("first_conv"), "Ctrl+Shift+Z in the name field should redo the rename");

        auto filtersOf = [&] { return document->spec().find("first_conv")->params.at("filters").get<int>(); };
        const int filtersBefore = filtersOf();
        auto* filters = qobject_cast<QSpinBox*>(inspector->editorFor("filters"));
        QVERIFY(filters);
        filters->setFocus();
        filters->selectAll();
        QTest::keyClicks(filters, QString::number(filtersBefore + 7));
        QCOMPARE(filtersOf(), filtersBefore);  // typed, not committed yet
        QTest::keyClick(filters, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(filtersOf(), filtersBefore);
        QCOMPARE(filters->value(), filtersBefore);
        QVERIFY(document->hasNode("first_conv"));  // one undo: the typed value, not the rename
        QVERIFY(document->undoStack()->canRedo());
    }

    // An unticked check box can be seen on the dark theme (audit item 15: its edge was 1.2:1
    // against the window): its indicator's edge has at least the 3:1 contrast WCAG asks of it.
    void darkThemeCheckBoxesStandOutFromTheWindow() {
        auto luminance = [](QRgb pixel) {
            auto linear = [](int channel) {
                const double c = channel / 255.0;
                return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
            };
            return 0.2126 * linear(qRed(pixel)) + 0.7152 * linear(qGreen(pixel)) + 0.0722 * linear(qBlue(pixel));
        };
        auto contrast = [&](QRgb a, QRgb b) {
            const double la = luminance(a), lb = luminance(b);
            return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
        };
        cnnstudio::ui::applyTheme(cnnstudio::ui::Theme::Dark);
        QCheckBox box("Skip unreadable images and rows");
        box.resize(box.sizeHint());
        const QImage image = box.grab().toImage();
        QStyleOptionButton option;
        option.initFrom(&box);
        const QRect indicator = box.style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, &box);
        const QRgb window = box.palette().color(QPalette::Window).rgb();
        double edge = 0;
        for (int x = indicator.left(); x <= indicator.right(); ++x)
            edge = std::max(edge, contrast(image.pixel(x, indicator.top()), window));
        cnnstudio::ui::applyTheme(cnnstudio::ui::Theme::Light);
        QVERIFY2(edge >= 3.0, qPrintable(QString("the indicator's edge is %1:1 against the window").arg(edge, 0, 'f', 2)));
    }

    void presetsMenuListsEveryPreset() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        MainWindow window(options);
        auto* presets = window.findChild<QMenu*>("presetMenu");
        QVERIFY(presets);
        QStringList listed;
        for (QAction* action : presets->actions()) listed << action->text();
        for (const char* name : {"fer-cnn", "mini-xception", "lenet5", "vgg-fer"}) QVERIFY2(listed.contains(name), name);
        window.newFromPreset("lenet5");
        QCOMPARE(QString::fromStdString(window.document()->spec().name), QString("lenet5"));
    }

    void aRecordedRunOpensInRunHistory() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        MainWindow window(options);
        QVERIFY(window.openRunInHistory(cnnstudio::ui::tests::testDataPath("runs/20261130-014119-lenet5-adam")));
        QVERIFY(!window.openRunInHistory(cnnstudio::ui::tests::testDataPath("runs/no-such-run"), true));
    }

    void helpListsEveryShortcutAndHasAManual() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        MainWindow window(options);
        QStringList help;
        for (QAction* action : window.menuBar()->actions())
            if (action->text() == "&Help")
                for (QAction* item : action->menu()->actions()) help << item->text();
        QVERIFY2(help.contains("&Keyboard shortcuts") && help.contains("&Manual"), qPrintable(help.join(", ")));
        cnnstudio::ui::ShortcutsDialog shortcuts(window.menuBar());
        int withShortcut = 0;
        for (QAction* action : window.findChildren<QAction*>())
            if (!action->shortcut().isEmpty() && !action->menu()) ++withShortcut;
        QVERIFY(shortcuts.shortcutCount() >= 10);
        QVERIFY(shortcuts.shortcutCount() <= withShortcut);
        QVERIFY(cnnstudio::ui::ManualDialog().text().contains("Run history"));
    }

    void theDarkThemeIsKeptForTheNextStart() {
        cnnstudio::ui::MainWindowOptions options;  // the settings live in the tests' own folder
        {
            MainWindow window(options);
            QAction* dark = nullptr;
            for (QAction* action : window.findChildren<QAction*>())
                if (action->text() == "&Dark theme") dark = action;
            QVERIFY(dark && dark->isCheckable() && !dark->isChecked());
            dark->trigger();
            QVERIFY(QApplication::palette().color(QPalette::Window).lightnessF() < 0.5);
        }
        {
            MainWindow window(options);
            QAction* dark = nullptr;
            for (QAction* action : window.findChildren<QAction*>())
                if (action->text() == "&Dark theme") dark = action;
            QVERIFY(dark->isChecked());
            QVERIFY(QApplication::palette().color(QPalette::Window).lightnessF() < 0.5);
            dark->trigger();  // back to light for the tests that follow
            QVERIFY(QApplication::palette().color(QPalette::Window).lightnessF() >= 0.5);
        }
    }

    // With the real worker: Train from the window, Stop after the first epoch, Resume from Run
    // history, and the live dashboard follows all of it.
    void trainStopAndResumeFromTheWindow() {
        const QString worker = QStringLiteral(CNNSTUDIO_WORKER_PATH);
        if (!QFileInfo(worker).isExecutable())
            QSKIP(qPrintable("cnnstudio-train is not built (looked for " + worker +
                             "); this test runs once the worker target exists"));
        QTemporaryDir runs;
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = runs.path();
        MainWindow window(options);
        window.trainingSession()->controller()->setWorkerProgram(worker);
        window.newFromPreset("lenet5");
        cnnstudio::ui::RunSettings settings;
        // Enough epochs that Stop, sent after the first one, always lands before the run ends:
        // on an idle machine a 128-image epoch takes well under a second.
        settings.epochs = 20;
        settings.batchSize = 32;
        settings.limit = 128;
        settings.threads = 2;
        window.trainArea()->settingsPanel()->setSettings(settings);

        cnnstudio::ui::TrainingRun* live = window.trainingSession()->liveRun();
        QSignalSpy finished(window.trainingSession()->controller(), &cnnstudio::ui::TrainingController::runFinished);
        QSignalSpy failed(window.trainingSession()->controller(), &cnnstudio::ui::TrainingController::runFailed);
        window.startTraining();
        QVERIFY(window.trainingSession()->controller()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(live->epochs().size() >= 1 || !failed.isEmpty(), 300000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        window.trainingSession()->controller()->stop();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 300000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(QString::fromStdString(finished.at(0).at(0).value<cnnstudio::FinishedEvent>().reason), QString("stopped"));
        const QString runDirectory = live->runDirectory();
        QVERIFY(QFileInfo(runDirectory + "/checkpoints/latest").isDir());

        QTRY_VERIFY_WITH_TIMEOUT(!window.historyArea()->panel()->records().isEmpty() &&
                                     window.historyArea()->panel()->records().first().resumable, 20000);
        emit window.historyArea()->panel()->resumeRequested(runDirectory);
        QVERIFY(window.trainingSession()->controller()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(finished.size() + failed.size() >= 2, 300000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(QString::fromStdString(finished.at(1).at(0).value<cnnstudio::FinishedEvent>().reason), QString("completed"));
        // The epochs before the stop, replayed from the run's events, and the resumed ones.
        QCOMPARE(live->epochs().size(), qsizetype(settings.epochs));
        QCOMPARE(live->epochs().last().epoch, settings.epochs);
        window.trainArea()->dashboard()->refreshNow();
        QCOMPARE(window.trainArea()->dashboard()->curve(cnnstudio::ui::TrainingDashboard::Curve::EpochTrainLoss)->data()->size(),
                 settings.epochs);
    }
};

CNNSTUDIO_GUI_TEST(MainWindowTest);

#include "main_window_test.moc"
