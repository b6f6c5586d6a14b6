// TrainingController against stand-in workers (shell scripts in data/fake-workers/) for the event stream's edge
// cases — lines split across reads, a last line without newline, non-event output, stderr tails,
// failures, Stop and Kill — and against the real cnnstudio-train for one short epoch.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <sys/types.h>

#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_run.h"
#include "gui_tests.h"

using cnnstudio::ui::RunSettings;
using cnnstudio::ui::TrainingController;

namespace {

constexpr int workerWaitMs = 20000;

// A copy of tests/gui/data/fake-workers/<name>, a shell script standing in for cnnstudio-train
// that records its arguments, one per line, in arguments.txt next to itself.
QString copyWorker(const QTemporaryDir& folder, const QString& name) {
    const QString path = folder.filePath("fake-worker");
    if (!QFile::copy(cnnstudio::ui::tests::testDataPath("fake-workers/" + name), path)) return {};
    QFile(path).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
}

QStringList recordedArguments(const QTemporaryDir& folder) {
    QFile file(folder.filePath("arguments.txt"));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    QStringList lines = QString::fromUtf8(file.readAll()).split('\n');
    if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
    return lines;
}

cnnstudio::NetworkSpec smallSpec() { return cnnstudio::loadPreset("lenet5"); }

// Whether `pid` is a live process (not gone, not a zombie).
bool processRuns(pid_t pid) {
    QFile status(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!status.open(QIODevice::ReadOnly)) return false;
    const QByteArray line = status.readAll();
    const qsizetype afterName = line.lastIndexOf(')');
    return afterName >= 0 && line.size() > afterName + 2 && line.at(afterName + 2) != 'Z';
}

}  // namespace

class TrainingControllerTest : public QObject {
    Q_OBJECT

private slots:
    void eventsSplitAcrossReadsArriveWhole() {
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(copyWorker(folder, "split-events.sh"));
        QSignalSpy events(&controller, &TrainingController::eventReceived);
        QSignalSpy output(&controller, &TrainingController::outputLine);
        QSignalSpy finished(&controller, &TrainingController::runFinished);
        QSignalSpy failed(&controller, &TrainingController::runFailed);
        cnnstudio::ui::TrainingRun run;
        connect(&controller, &TrainingController::eventReceived, &run, &cnnstudio::ui::TrainingRun::addEvent);

        const QString runDir = folder.filePath("runs/a run with spaces");
        controller.start(RunSettings{}, smallSpec(), runDir);
        QVERIFY(controller.isRunning());
        QVERIFY(finished.wait(workerWaitMs));
        QCOMPARE(failed.count(), 0);
        QCOMPARE(events.count(), 2);
        const cnnstudio::Event started = events.at(0).at(0).value<cnnstudio::Event>();
        QVERIFY(started.as<cnnstudio::RunStartedEvent>());
        QCOMPARE(started.as<cnnstudio::RunStartedEvent>()->stepsPerEpoch, 10);
        QCOMPARE(QString::fromStdString(finished.at(0).at(0).value<cnnstudio::FinishedEvent>().reason), QString("completed"));
        QCOMPARE(output.count(), 1);
        QCOMPARE(run.classNames(), QStringList({"a", "b"}));
        QCOMPARE(controller.stderrTail().size(), qsizetype(TrainingController::stderrLinesKept));
        QCOMPARE(controller.stderrTail().last(), QString("stderr line 60"));
        QCOMPARE(controller.stderrTail().first(), QString("stderr line 11"));
        QVERIFY(!controller.isRunning());

        // The argument list arrives intact: the run folder with spaces is one argument.
        const QStringList arguments = recordedArguments(folder);
        QCOMPARE(arguments, controller.lastArguments());
        QVERIFY(arguments.contains(runDir));
        const qsizetype spec = arguments.indexOf("--spec");
        QVERIFY(spec >= 0);
        QVERIFY2(!QFileInfo::exists(arguments.at(spec + 1)), "the spec hand-over file is removed after the run");
    }

    void exitWithoutFinishedIsAFailureWithTheStderrTail() {
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(copyWorker(folder, "exit-without-finished.sh"));
        QSignalSpy failed(&controller, &TrainingController::runFailed);
        controller.start(RunSettings{}, smallSpec(), folder.filePath("run"));
        QVERIFY(failed.wait(workerWaitMs));
        QVERIFY2(failed.at(0).at(0).toString().contains("code 3"), qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(failed.at(0).at(1).toString().contains("Segmentation fault in conv kernel"));
    }

    void aFailedEventGivesItsReason() {
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(copyWorker(folder, "failed-event.sh"));
        QSignalSpy failed(&controller, &TrainingController::runFailed);
        QSignalSpy finished(&controller, &TrainingController::runFinished);
        controller.start(RunSettings{}, smallSpec(), folder.filePath("run"));
        QVERIFY(failed.wait(workerWaitMs));
        QCOMPARE(failed.at(0).at(0).toString(), QString("loss became NaN at epoch 1 step 7 (lower the learning rate)"));
        QCOMPARE(finished.count(), 0);
    }

    void stopAsksTheWorkerToFinishGracefully() {
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(copyWorker(folder, "graceful-stop.sh"));
        QSignalSpy output(&controller, &TrainingController::outputLine);
        QSignalSpy finished(&controller, &TrainingController::runFinished);
        QSignalSpy states(&controller, &TrainingController::stateChanged);
        controller.start(RunSettings{}, smallSpec(), folder.filePath("run"));
        QVERIFY(output.wait(workerWaitMs));
        controller.stop();
        QCOMPARE(controller.state(), TrainingController::State::Stopping);
        QVERIFY(finished.wait(workerWaitMs));
        QCOMPARE(QString::fromStdString(finished.at(0).at(0).value<cnnstudio::FinishedEvent>().reason), QString("stopped"));
        QCOMPARE(controller.state(), TrainingController::State::Idle);
        QVERIFY(states.count() >= 3);  // running, stopping, idle
    }

    void killEndsTheWorkerAtOnce() {
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(copyWorker(folder, "sleeps.sh"));
        QSignalSpy output(&controller, &TrainingController::outputLine);
        QSignalSpy killed(&controller, &TrainingController::runKilled);
        QSignalSpy failed(&controller, &TrainingController::runFailed);
        controller.start(RunSettings{}, smallSpec(), folder.filePath("run"));
        QVERIFY(output.wait(workerWaitMs));
        controller.kill();
        QVERIFY(killed.wait(workerWaitMs));
        QCOMPARE(failed.size(), 0);  // the user's Kill is no failure
    }

    // A launcher's Kill must end its job too (mpirun and the ranks): the worker runs in its own
    // process group and Kill signals the whole group.
    void killEndsTheWorkersChildrenToo() {
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(copyWorker(folder, "launches-a-job.sh"));
        QSignalSpy output(&controller, &TrainingController::outputLine);
        QSignalSpy killed(&controller, &TrainingController::runKilled);
        controller.start(RunSettings{}, smallSpec(), folder.filePath("run"));
        QVERIFY(output.wait(workerWaitMs));
        QFile pidFile(folder.filePath("job.pid"));
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        const pid_t job = pid_t(pidFile.readAll().trimmed().toInt());
        QVERIFY(job > 0);
        controller.kill();
        QVERIFY(killed.wait(workerWaitMs));
        // Gone, or a zombie waiting for init: either way it no longer runs.
        QTRY_VERIFY_WITH_TIMEOUT(!processRuns(job), 5000);
    }

    void aMissingWorkerSaysHowToBuildIt() {
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(folder.filePath("no-such-worker"));
        QSignalSpy failed(&controller, &TrainingController::runFailed);
        controller.start(RunSettings{}, smallSpec(), folder.filePath("run"));
        QVERIFY(failed.wait(workerWaitMs));
        QVERIFY2(failed.at(0).at(0).toString().contains("cnnstudio-train"), qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(!controller.isRunning());
    }

    void settingsWithProblemsDoNotStart() {
        TrainingController controller;
        RunSettings settings;
        settings.epochs = 0;
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, controller.start(settings, smallSpec(), "/tmp/unused"));
        QVERIFY(!controller.isRunning());
    }

    void newRunFoldersAreUnique() {
        QTemporaryDir folder;
        const QString first = TrainingController::newRunDirectory(folder.path(), "fer cnn/v2");
        QVERIFY2(QFileInfo(first).fileName().endsWith("-fer-cnn-v2"), qPrintable(first));
        QVERIFY(QDir().mkpath(first));
        const QString second = TrainingController::newRunDirectory(folder.path(), "fer cnn/v2");
        QVERIFY(second != first);
    }

    void realOneEpochRunEndsWithFinished() {
        const QString worker = QStringLiteral(CNNSTUDIO_WORKER_PATH);
        if (!QFileInfo(worker).isExecutable())
            QSKIP(qPrintable("cnnstudio-train is not built (looked for " + worker +
                             "); this test runs once the worker target exists"));
        QTemporaryDir folder;
        TrainingController controller;
        controller.setWorkerProgram(worker);
        RunSettings settings;
        settings.backend = "cpu";
        settings.epochs = 1;
        settings.batchSize = 32;
        settings.limit = 256;
        settings.threads = 2;
        settings.learningRate = 0.01;
        QSignalSpy finished(&controller, &TrainingController::runFinished);
        QSignalSpy failed(&controller, &TrainingController::runFailed);
        cnnstudio::ui::TrainingRun run;
        connect(&controller, &TrainingController::eventReceived, &run, &cnnstudio::ui::TrainingRun::addEvent);
        const QString runDir = folder.filePath("runs/lenet5-one-epoch");
        controller.start(settings, smallSpec(), runDir);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 300000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString() + "\n" +
                                                                       failed.at(0).at(1).toString()));
        QCOMPARE(QString::fromStdString(finished.at(0).at(0).value<cnnstudio::FinishedEvent>().reason), QString("completed"));
        QCOMPARE(run.epochs().size(), qsizetype(1));
        QVERIFY(QFileInfo::exists(runDir + "/events.jsonl"));
    }
};

CNNSTUDIO_GUI_TEST(TrainingControllerTest);

#include "training_controller_test.moc"
