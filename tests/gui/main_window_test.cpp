// The main window as a user first sees it: the fer-cnn preset on the Design page, the built-in
// Fashion-MNIST chosen on the Train page, the totals in the status bar, the three areas.
#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>

#include "cnnstudio/spec.h"
#include "cnnstudio/ui/design_document.h"
#include "cnnstudio/ui/main_window.h"
#include "cnnstudio/ui/run_history_panel.h"
#include "cnnstudio/ui/run_settings_panel.h"
#include "cnnstudio/ui/train_area.h"
#include "cnnstudio/ui/training_run.h"
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
        QCOMPARE(titles, QStringList({"Design", "Train", "Run history"}));
        QCOMPARE(window.historyPanel()->runsRoot(), options.runsRoot);
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
        QVERIFY(window.openRunInHistory(cnnstudio::ui::tests::testDataPath("runs/20261130-101500-fer-cnn")));
        QVERIFY(!window.openRunInHistory(cnnstudio::ui::tests::testDataPath("runs/no-such-run"), true));
    }
};

CNNSTUDIO_GUI_TEST(MainWindowTest);

#include "main_window_test.moc"
