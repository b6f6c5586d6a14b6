// RunSettings and its panel: the worker's argument list carries every setting, problems are
// named, hostfiles are checked line by line, and the panel round-trips a RunSettings.
#include <QComboBox>
#include <QTest>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/ui/training/dataset_picker.h"
#include "cnnstudio/ui/training/run_settings.h"
#include "cnnstudio/ui/training/run_settings_panel.h"
#include "gui_tests.h"

using cnnstudio::ui::RunSettings;

class RunSettingsTest : public QObject {
    Q_OBJECT

private slots:
    void workerArgumentsCarryEverySetting() {
        RunSettings settings;
        settings.backend = "cpu";
        settings.dataset = "fer2013:/data/fer 2013.csv";
        settings.epochs = 30;
        settings.batchSize = 128;
        settings.optimizer = "adamw";
        settings.learningRate = 0.0003;
        settings.schedule = "plateau";
        settings.augmentation = "crop=4,flip";
        settings.threads = 6;
        settings.seed = 7;
        settings.limit = 5000;
        QCOMPARE(settings.workerArguments("/tmp/spec.json", "/runs/r1"),
                 QStringList({"--spec", "/tmp/spec.json", "--dataset", "fer2013:/data/fer 2013.csv", "--backend", "cpu",
                              "--precision", "fp32", "--epochs", "30", "--batch", "128", "--optimizer", "adamw",
                              "--lr", "0.0003", "--schedule", "plateau", "--augment", "crop=4,flip", "--run-dir",
                              "/runs/r1", "--events", "-", "--threads", "6", "--seed", "7", "--limit", "5000"}));
    }

    void severalGpusAndNodesGoToTheWorker() {
        RunSettings settings;
        settings.backend = "cudnn";
        settings.precision = "bf16";
        settings.gpuCount = 4;
        settings.gpuIndices = {0, 2, 3, 5};
        settings.nodeCount = 2;
        const QStringList arguments = settings.workerArguments("/s.json", "/r", "/tmp/hostfile");
        QVERIFY(arguments.join(' ').contains("--precision bf16"));
        QVERIFY(arguments.join(' ').contains("--gpus 4 --nodes 2 --hostfile /tmp/hostfile"));
        QCOMPARE(settings.visibleDevices(), QString("0,2,3,5"));

        settings.backend = "cpu";  // CPU backends: fp32, no GPU flags
        const QString cpu = settings.workerArguments("/s.json", "/r", "/tmp/hostfile").join(' ');
        QVERIFY(cpu.contains("--precision fp32"));
        QVERIFY(!cpu.contains("--gpus"));
        QVERIFY(settings.visibleDevices().isEmpty());
    }

    void problemsSayWhatToChange() {
        RunSettings settings;
        QVERIFY2(settings.problems().isEmpty(), qPrintable(settings.problems().join('\n')));
        settings.epochs = 0;
        settings.dataset = "mnist";
        settings.augmentation = "flip,twirl=3";
        settings.precision = "bf16";
        const QString problems = settings.problems().join('\n');
        QVERIFY2(problems.contains("epoch"), qPrintable(problems));
        QVERIFY2(problems.contains("Data set"), qPrintable(problems));
        QVERIFY2(problems.contains("Augmentation"), qPrintable(problems));
        QVERIFY2(problems.contains("fp32"), qPrintable(problems));
        if (!cnnstudio::backendUnavailableReason("cuda").empty()) {
            RunSettings gpu;
            gpu.backend = "cuda";
            QVERIFY(gpu.problems().join(' ').contains(QString::fromStdString(cnnstudio::backendUnavailableReason("cuda"))));
        }
    }

    void everyAugmentationThePanelOffersIsAccepted() {
        cnnstudio::ui::RunSettingsPanel panel;
        auto* augmentation = panel.findChild<QComboBox*>("augmentation");
        QVERIFY(augmentation);
        QVERIFY(augmentation->count() >= 3);
        for (int i = 0; i < augmentation->count(); ++i) {
            RunSettings settings;
            settings.augmentation = augmentation->itemText(i);
            QVERIFY2(settings.problems().isEmpty(), qPrintable(augmentation->itemText(i) + ": " + settings.problems().join(' ')));
        }
    }

    void hostfileProblemsNameTheirLine() {
        QVERIFY(cnnstudio::ui::hostfileProblems("# cluster\nnode1 slots=4\nnode2 slots=4\n", 2, 4).isEmpty());
        const QStringList bad = cnnstudio::ui::hostfileProblems("node1 slots=4\nnode2 slots four\n", 2, 4);
        QVERIFY2(bad.join('\n').contains("line 2"), qPrintable(bad.join('\n')));
        const QStringList few = cnnstudio::ui::hostfileProblems("node1 slots=2\n", 2, 4);
        QVERIFY2(few.join('\n').contains("1 host"), qPrintable(few.join('\n')));
        QVERIFY2(few.join('\n').contains("line 1: node1 has 2 slot"), qPrintable(few.join('\n')));
    }

    void settingsSurviveTheSettingsStore() {
        RunSettings settings;
        settings.backend = "cpu-ref";
        settings.gpuIndices = {1, 3};
        settings.hostfileText = "a slots=1\n";
        settings.learningRate = 0.05;
        settings.limit = 1000;
        QVERIFY(RunSettings::fromVariantMap(settings.toVariantMap()) == settings);
    }

    void panelRoundTripsSettingsAndStartsOnFashionMnist() {
        cnnstudio::ui::RunSettingsPanel panel;
        QCOMPARE(panel.settings().dataset, QString("fashion-mnist"));
        RunSettings settings;
        settings.backend = "cpu-ref";
        settings.epochs = 3;
        settings.batchSize = 16;
        settings.optimizer = "sgd";
        settings.learningRate = 0.05;
        settings.schedule = "step";
        settings.augmentation = "flip";
        settings.seed = 11;
        settings.limit = 640;
        settings.dataset = "idx:/data/mnist";
        panel.setSettings(settings);
        RunSettings read = panel.settings();
        read.threads = settings.threads = 1;  // cpu-ref runs one thread whatever the field says
        QCOMPARE(read.dataset, settings.dataset);
        QVERIFY(read == settings);
    }
};

CNNSTUDIO_GUI_TEST(RunSettingsTest);

#include "run_settings_test.moc"
