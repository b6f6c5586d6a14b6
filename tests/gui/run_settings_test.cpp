// RunSettings and its panel: the worker's argument list carries every setting, problems are
// named, hostfiles are checked line by line, and the panel round-trips a RunSettings.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/datasets/dataset_spec.h"
#include "cnnstudio/ui/training/dataset_picker.h"
#include "cnnstudio/ui/training/dataset_preview.h"
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
                              "/runs/r1", "--events", "-", "--threads", "6", "--seed", "7", "--momentum", "0.9",
                              "--weight-decay", "0", "--warmup-epochs", "0", "--label-smoothing", "0",
                              "--class-weights", "none", "--early-stop", "0", "--log-every", "10", "--limit", "5000"}));
    }

    // Every option of cnnstudio-train's training command has a field, and the defaults are the CLI's.
    void everyTrainerOptionReachesTheWorker() {
        RunSettings settings;
        settings.optimizer = "sgd";
        settings.momentum = 0.95;
        settings.weightDecay = 0.0005;
        settings.warmupEpochs = 2;
        settings.labelSmoothing = 0.1;
        settings.classWeights = "balanced";
        settings.earlyStopPatience = 5;
        settings.logEvery = 3;
        settings.scaleLearningRate = true;
        settings.skipBad = true;
        settings.cpuRankCount = 4;
        const QString arguments = settings.workerArguments("/s.json", "/r").join(' ');
        for (const char* expected : {"--momentum 0.95", "--weight-decay 0.0005", "--warmup-epochs 2",
                                     "--label-smoothing 0.1", "--class-weights balanced", "--early-stop 5",
                                     "--log-every 3", "--scale-lr", "--skip-bad", "--ranks 4"})
            QVERIFY2(arguments.contains(expected), qPrintable(QString(expected) + " missing from " + arguments));

        settings.backend = "cudnn";  // GPU backends: one rank per GPU, never --ranks
        QVERIFY(!settings.workerArguments("/s.json", "/r").join(' ').contains("--ranks"));

        const RunSettings defaults;
        QCOMPARE(defaults.momentum, 0.9);
        QCOMPARE(defaults.weightDecay, 0.0);
        QCOMPARE(defaults.warmupEpochs, 0);
        QCOMPARE(defaults.labelSmoothing, 0.0);
        QCOMPARE(defaults.classWeights, QString("none"));
        QCOMPARE(defaults.earlyStopPatience, 0);
        QCOMPARE(defaults.cpuRankCount, 1);
        QVERIFY(!defaults.workerArguments("/s.json", "/r").contains("--ranks"));
    }

    // Distillation: each teacher, then the weight and temperature; none without a teacher. A
    // teacher that is neither a folder nor an installed model is a problem naming it, and the
    // weight and temperature rows follow the teachers field.
    void teachersReachTheWorkerAndUnknownOnesAreProblems() {
        RunSettings settings;
        QVERIFY(!settings.workerArguments("/s.json", "/r").join(' ').contains("distill"));
        settings.teachers = {"fer-resnet", "/runs/big run"};
        settings.distillWeight = 0.9;
        settings.distillTemperature = 3;
        const QStringList arguments = settings.workerArguments("/s.json", "/r");
        QVERIFY2(arguments.join(' ').contains("--teacher fer-resnet --teacher /runs/big run --distill-weight 0.9 "
                                              "--distill-temperature 3"),
                 qPrintable(arguments.join(' ')));
        const QString problems = settings.problems().join('\n');
        QVERIFY2(problems.contains("Teacher '/runs/big run'"), qPrintable(problems));
        QVERIFY2(!problems.contains("Teacher 'fer-resnet'"), qPrintable(problems));

        cnnstudio::ui::RunSettingsPanel panel;
        auto* teachers = panel.findChild<QLineEdit*>("teachers");
        auto* weight = panel.findChild<QDoubleSpinBox*>("distillWeight");
        QVERIFY(teachers && weight);
        QVERIFY(!weight->isEnabled());
        teachers->setText("fer-resnet, fer-mini-xception");
        QVERIFY(weight->isEnabled());
        QCOMPARE(panel.settings().teachers, QStringList({"fer-resnet", "fer-mini-xception"}));
    }

    void outOfRangeOptionsAreProblems() {
        RunSettings settings;
        settings.momentum = 1.0;
        settings.labelSmoothing = -0.1;
        settings.classWeights = "inverse";
        settings.cpuRankCount = 0;
        const QString problems = settings.problems().join('\n');
        for (const char* expected : {"momentum", "label smoothing", "class weights", "CPU rank"})
            QVERIFY2(problems.contains(expected), qPrintable(QString(expected) + " not in: " + problems));
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

        settings.backend = "cpu";  // CPU backends: no GPU flags
        settings.precision = "fp32";
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
        settings.precision = "tf32";
        const QString problems = settings.problems().join('\n');
        QVERIFY2(problems.contains("epoch"), qPrintable(problems));
        QVERIFY2(problems.contains("Data set"), qPrintable(problems));
        QVERIFY2(problems.contains("Augmentation"), qPrintable(problems));
        QVERIFY2(problems.contains("The cpu backend trains in fp32"), qPrintable(problems));
        // bf16 on the cpu backend: refused, saying what it needs, only on a CPU without bf16
        // instructions.
        settings.precision = "bf16";
        const QString bf16 = settings.problems().join('\n');
        QCOMPARE(bf16.contains("would refuse bf16"), !cnnstudio::backendTrainsIn("cpu", "bf16"));
        if (!cnnstudio::backendTrainsIn("cpu", "bf16")) QVERIFY2(bf16.contains("AVX512-BF16 or AMX"), qPrintable(bf16));
        if (!cnnstudio::backendUnavailableReason("cuda").empty()) {
            RunSettings gpu;
            gpu.backend = "cuda";
            QVERIFY(gpu.problems().join(' ').contains(QString::fromStdString(cnnstudio::backendUnavailableReason("cuda"))));
        }
    }

    // Our own cuda kernels run fp32 and bf16: the worker would fail on tf32, so the settings
    // refuse it before a run starts; cudnn takes all three.
    void cudaWithTf32IsRefusedBeforeTheWorkerRuns() {
        RunSettings settings;
        settings.backend = "cuda";
        settings.precision = "tf32";
        const QString problems = settings.problems().join('\n');
        QVERIFY2(problems.contains("The cuda backend trains in fp32 or bf16, so the worker would refuse tf32"),
                 qPrintable(problems));
        for (const char* precision : {"fp32", "bf16"}) {
            settings.precision = precision;
            QVERIFY2(!settings.problems().join('\n').contains("would refuse"), qPrintable(settings.problems().join('\n')));
        }
        settings.backend = "cudnn";
        settings.precision = "tf32";
        QVERIFY2(!settings.problems().join('\n').contains("would refuse"), qPrintable(settings.problems().join('\n')));
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

    void augmentationControlsAndTextFollowEachOther() {
        cnnstudio::ui::RunSettingsPanel panel;
        auto* text = panel.findChild<QComboBox*>("augmentation");
        auto* flip = panel.findChild<QCheckBox*>("augmentFlip");
        auto* rotate = panel.findChild<QDoubleSpinBox*>("augmentRotate");
        auto* scaleLow = panel.findChild<QDoubleSpinBox*>("augmentScaleLow");
        auto* scaleHigh = panel.findChild<QDoubleSpinBox*>("augmentScaleHigh");
        auto* mixup = panel.findChild<QDoubleSpinBox*>("augmentMixup");
        auto* erase = panel.findChild<QDoubleSpinBox*>("augmentErase");
        QVERIFY(text && flip && rotate && scaleLow && scaleHigh && mixup && erase);

        // Typed text moves the controls.
        RunSettings settings;
        settings.augmentation = "flip,rotate=15,scale=0.8-1.2,erase=0.25,mixup=0.2";
        panel.setSettings(settings);
        QVERIFY(flip->isChecked());
        QCOMPARE(rotate->value(), 15.0);
        QCOMPARE(scaleLow->value(), 0.8);
        QCOMPARE(scaleHigh->value(), 1.2);
        QCOMPARE(erase->value(), 0.25);
        QCOMPARE(mixup->value(), 0.2);

        // Editing a control rewrites the text, which the worker then receives.
        QSignalSpy changed(&panel, &cnnstudio::ui::RunSettingsPanel::settingsChanged);
        flip->setChecked(false);
        mixup->setValue(0.0);
        auto* cutmix = panel.findChild<QDoubleSpinBox*>("augmentCutmix");
        QVERIFY(cutmix);
        cutmix->setValue(1.0);
        QCOMPARE(panel.settings().augmentation, QString("rotate=15,scale=0.8-1.2,erase=0.25,cutmix=1"));
        QVERIFY(changed.count() >= 3);
        QVERIFY(panel.settings().workerArguments("/s.json", "/r").contains("rotate=15,scale=0.8-1.2,erase=0.25,cutmix=1"));

        // Text that does not parse stays as typed and is named as a problem.
        settings.augmentation = "flip,spin=3";
        panel.setSettings(settings);
        QCOMPARE(panel.settings().augmentation, QString("flip,spin=3"));
        QVERIFY2(panel.problems().join(' ').contains("Augmentation"), qPrintable(panel.problems().join(' ')));
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
        settings.momentum = 0.8;
        settings.weightDecay = 0.01;
        settings.warmupEpochs = 3;
        settings.labelSmoothing = 0.2;
        settings.classWeights = "balanced";
        settings.earlyStopPatience = 4;
        settings.cpuRankCount = 2;
        settings.scaleLearningRate = true;
        settings.skipBad = true;
        settings.logEvery = 25;
        settings.teachers = {"fer-resnet", "/runs/big one"};
        settings.distillWeight = 0.9;
        settings.distillTemperature = 3;
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
        settings.momentum = 0.85;
        settings.weightDecay = 0.001;
        settings.warmupEpochs = 1;
        settings.labelSmoothing = 0.1;
        settings.classWeights = "balanced";
        settings.earlyStopPatience = 3;
        settings.cpuRankCount = 2;
        settings.scaleLearningRate = true;
        settings.skipBad = true;
        settings.logEvery = 5;
        settings.teachers = {"fer-resnet", "/runs/r 2"};
        settings.distillWeight = 0.7;
        settings.distillTemperature = 2;
        panel.setSettings(settings);
        RunSettings read = panel.settings();
        read.threads = settings.threads = 1;  // cpu-ref runs one thread whatever the field says
        QCOMPARE(read.dataset, settings.dataset);
        QVERIFY(read == settings);
    }

    // The Train page gives the settings 470 pixels at first (TrainArea); every page of them fits
    // that without a sideways scroll bar or fields cut off at the right.
    void everyPageFitsTheSettingsColumnWithoutScrollingSideways() {
        cnnstudio::ui::RunSettingsPanel panel;
        panel.resize(470, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* pages = panel.findChild<QTabWidget*>("settingsPages");
        QVERIFY(pages);
        for (int index = 0; index < pages->count(); ++index) {
            pages->setCurrentIndex(index);
            auto* scroll = qobject_cast<QScrollArea*>(pages->widget(index));
            QVERIFY(scroll);
            QCoreApplication::processEvents();
            QString widest;
            int widestWidth = 0;
            for (QWidget* child : scroll->widget()->findChildren<QWidget*>())
                if (child->minimumSizeHint().width() > widestWidth) {
                    widestWidth = child->minimumSizeHint().width();
                    widest = child->objectName() + " " + child->metaObject()->className();
                }
            QVERIFY2(scroll->widget()->minimumSizeHint().width() <= scroll->viewport()->width(),
                     qPrintable(QString("page '%1' needs %2 pixels, the column gives %3 (widest: %4, %5)")
                                    .arg(pages->tabText(index))
                                    .arg(scroll->widget()->minimumSizeHint().width())
                                    .arg(scroll->viewport()->width())
                                    .arg(widest)
                                    .arg(widestWidth)));
        }
    }

    // The Data set tab counts the training images of the split the run will use: the one the
    // run's seed holds out (audit item 2: it always showed seed 0's).
    void dataSetPreviewCountsTheSplitOfTheRunsSeed() {
        auto trainCountsFor = [](std::uint64_t seed) {
            cnnstudio::datasets::LoadOptions options;
            options.seed = seed;
            return cnnstudio::ui::DatasetSummary::fromSplits(cnnstudio::datasets::loadDataset("fashion-mnist", options), 0)
                .trainCounts;
        };
        const QList<qint64> seed7 = trainCountsFor(7), seed8 = trainCountsFor(8);
        QVERIFY(seed7 != seed8);

        cnnstudio::ui::RunSettingsPanel panel;
        RunSettings settings;
        settings.dataset = "fashion-mnist";
        settings.seed = 7;
        panel.setSettings(settings);
        cnnstudio::ui::DatasetPicker* picker = panel.datasetPicker();
        QTRY_COMPARE_WITH_TIMEOUT(picker->preview()->summary().trainCounts, seed7, 60000);
        auto* note = picker->findChild<QLabel*>("datasetSplitNote");
        QVERIFY(note);
        QVERIFY2(note->text().contains("seed 7"), qPrintable(note->text()));

        panel.findChild<QSpinBox*>("seed")->setValue(8);
        QTRY_COMPARE_WITH_TIMEOUT(picker->preview()->summary().trainCounts, seed8, 60000);
        QVERIFY2(note->text().contains("seed 8"), qPrintable(note->text()));
    }

    // "Skip unreadable images and rows" changes what the run trains on, so the Data set tab reads
    // the data set as the run will: with it, the bad row is left out and counted; without it,
    // the bad row is the error (audit: the preview ignored the option).
    void dataSetPreviewLeavesOutUnreadableRowsWhenTheRunSkipsThem() {
        QTemporaryDir folder;
        QVERIFY(folder.isValid());
        const QString csv = folder.filePath("faces.csv");
        {
            QFile file(csv);
            QVERIFY(file.open(QIODevice::WriteOnly));
            const QByteArray face = QByteArray("0 ").repeated(48 * 48 - 1) + "0";
            file.write("emotion,pixels,Usage\n");
            for (int row = 0; row < 4; ++row) file.write(QByteArray::number(row % 2) + "," + face + ",Training\n");
            file.write("1,12 34,Training\n");  // two pixels, not 2304
            file.write("0," + face + ",PublicTest\n");
        }
        cnnstudio::ui::RunSettingsPanel panel;
        RunSettings settings;
        settings.dataset = "fer2013:" + csv;
        settings.skipBad = false;
        panel.setSettings(settings);
        cnnstudio::ui::DatasetPicker* picker = panel.datasetPicker();
        auto* header = picker->preview()->findChild<QLabel*>("datasetHeader");
        QVERIFY(header);
        QTRY_VERIFY_WITH_TIMEOUT(header->text().contains("faces.csv:6"), 30000);
        QCOMPARE(picker->preview()->summary().trainSize, 0);
        QVERIFY2(header->text().contains("tick “Skip unreadable images and rows” on the Training tab") &&
                     !header->text().contains("--skip-bad"),
                 qPrintable(header->text()));

        panel.findChild<QCheckBox*>("skipBad")->setChecked(true);
        QTRY_COMPARE_WITH_TIMEOUT(picker->preview()->summary().skipped, 1, 30000);
        QVERIFY2(header->text().contains("1 unreadable image(s) or row(s) left out"), qPrintable(header->text()));
        QVERIFY2(header->toolTip().contains("faces.csv:6"), qPrintable(header->toolTip()));
        QCOMPARE(picker->preview()->summary().trainSize, 4);

        panel.findChild<QCheckBox*>("skipBad")->setChecked(false);
        QTRY_VERIFY_WITH_TIMEOUT(header->text().contains("faces.csv:6"), 30000);
        QCOMPARE(picker->preview()->summary().skipped, 0);
    }

    // Scrolling the Training page with the wheel scrolls the page: a field passing under the
    // pointer keeps its value (audit item 1) unless the user has clicked into it first.
    // Audit item 18: the augmentation error quotes the whole recipe, a comma list without spaces;
    // it wraps inside a narrow panel instead of running off its right edge.
    void aLongAugmentationErrorWrapsInsideThePanel() {
        cnnstudio::ui::RunSettingsPanel panel;
        RunSettings settings;
        settings.augmentation = "crop=4,flip,rotate=abc,scale=0.9-1.1,shift=0.1,erase=0.25,erase-fill=noise,"
                                "border=replicate,mixup=0.2,cutmix=1,brightness=0.2,contrast=0.2";
        panel.setSettings(settings);
        auto* problems = panel.findChild<QLabel*>("settingsProblems");
        QVERIFY(problems && problems->text().contains("abc"));
        constexpr int panelTextWidth = 300;
        const QRect wrapped = QFontMetrics(problems->font())
                                  .boundingRect(QRect(0, 0, panelTextWidth, 10000), Qt::TextWordWrap, problems->text());
        QVERIFY2(wrapped.width() <= panelTextWidth, qPrintable(QString::number(wrapped.width())));
    }

    // Audit item 20: the cpu backend's label does not promise "every core" while CPU threads says 1.
    void cpuBackendLabelDefersToTheThreadCount() {
        cnnstudio::ui::RunSettingsPanel panel;
        auto* backend = panel.findChild<QComboBox*>("backend");
        QVERIFY(backend);
        const int cpu = backend->findData("cpu");
        QVERIFY(cpu >= 0);
        QVERIFY2(!backend->itemText(cpu).contains("every core"), qPrintable(backend->itemText(cpu)));
    }

    void wheelScrollsThePanelPastFieldsWithoutFocus() {
        cnnstudio::ui::RunSettingsPanel panel;
        panel.resize(470, 400);
        panel.show();
        panel.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&panel));
        auto* pages = panel.findChild<QTabWidget*>("settingsPages");
        QVERIFY(pages);
        pages->setCurrentIndex(1);
        auto* scroll = qobject_cast<QScrollArea*>(pages->currentWidget());
        QVERIFY(scroll);
        QVERIFY2(scroll->verticalScrollBar()->maximum() > 0, "the Training page should need scrolling at 400 pixels");

        // One notch down over a field, passed up its parents while they ignore it, as Qt passes
        // on a wheel event from the mouse. (Qt propagates only spontaneous wheel events, and a
        // test cannot send one in Qt 6.4, so the walk is done here.)
        auto wheelDownOver = [](QWidget* field) {
            const QPoint spot = field->mapToGlobal(field->rect().center());
            for (QWidget* target = field; target; target = target->isWindow() ? nullptr : target->parentWidget()) {
                QWheelEvent wheel(target->mapFromGlobal(QPointF(spot)), QPointF(spot), QPoint(), QPoint(0, -120),
                                  Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
                QApplication::sendEvent(target, &wheel);
                if (wheel.isAccepted()) return;
            }
        };
        auto* crop = panel.findChild<QSpinBox*>("augmentCrop");
        auto* optimizer = panel.findChild<QComboBox*>("optimizer");
        auto* augmentation = panel.findChild<QComboBox*>("augmentation");
        QVERIFY(crop && optimizer && augmentation);
        crop->setValue(3);
        const int cropBefore = crop->value();
        const int optimizerBefore = optimizer->currentIndex();
        const QString augmentationBefore = augmentation->currentText();
        const int scrolledBefore = scroll->verticalScrollBar()->value();
        for (QWidget* field : std::initializer_list<QWidget*>{crop, optimizer, augmentation}) {
            // Qt's default, WheelFocus, would let the wheel focus the field on the way past.
            QCOMPARE(field->focusPolicy(), Qt::StrongFocus);
            wheelDownOver(field);
        }
        QCOMPARE(crop->value(), cropBefore);
        QCOMPARE(optimizer->currentIndex(), optimizerBefore);
        QCOMPARE(augmentation->currentText(), augmentationBefore);
        QVERIFY2(scroll->verticalScrollBar()->value() > scrolledBefore, "the wheel should scroll the page instead");

        crop->setFocus();
        QVERIFY(crop->hasFocus());
        wheelDownOver(crop);
        QCOMPARE(crop->value(), cropBefore - 1);
    }
};

CNNSTUDIO_GUI_TEST(RunSettingsTest);

#include "run_settings_test.moc"
