// The output handling every worker-running page shares (ui/common/worker_process.h): lines cut
// between reads, the bounded standard-error tail, and Kill reaching the worker's children.
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

#include "cnnstudio/ui/common/worker_process.h"
#include "gui_tests.h"

using namespace cnnstudio::ui;

class WorkerProcessTest : public QObject {
    Q_OBJECT

private slots:
    void lineCutBetweenReadsWaitsForItsEnd() {
        LineSplitter splitter;
        QCOMPARE(splitter.append("{\"event\":\"st"), QList<QByteArray>{});
        QCOMPARE(splitter.append("ep\"}\n{\"a\":1}\npartial"),
                 (QList<QByteArray>{"{\"event\":\"step\"}", "{\"a\":1}"}));
        QCOMPARE(splitter.rest(), QByteArray("partial"));
        QCOMPARE(splitter.rest(), QByteArray());
    }

    void stderrTailKeepsTheLastLinesAndTheUnfinishedOne() {
        StderrTail tail(2);
        tail.append("one\ntwo\nthree\nfo");
        QCOMPARE(tail.lines(), (QStringList{"two", "three"}));
        QCOMPARE(tail.finish(), (QStringList{"three", "fo"}));
        tail.clear();
        QVERIFY(tail.lines().isEmpty());
    }

    // A worker that started a child of its own (as cnnstudio-train starts mpirun): killing the
    // group ends the child too, which killing the worker alone would leave running.
    void killProcessGroupEndsTheWorkersChildren() {
        QTemporaryDir folder;
        const QString childPidFile = folder.filePath("child.pid");
        QProcess worker;
        worker.setProgram("/bin/sh");
        worker.setArguments({"-c", QString("sleep 60 & echo $! > %1; wait").arg(childPidFile)});
        startsOwnProcessGroup(worker);
        worker.start();
        QVERIFY(worker.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(childPidFile).size() > 0, 10000);
        QFile file(childPidFile);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const pid_t child = pid_t(file.readAll().trimmed().toLongLong());
        QVERIFY(child > 0);
        killProcessGroup(worker);
        QVERIFY(worker.waitForFinished(10000));
        QTRY_VERIFY_WITH_TIMEOUT(::kill(child, 0) != 0, 10000);  // the child is gone
    }
};

CNNSTUDIO_GUI_TEST(WorkerProcessTest);

#include "worker_process_test.moc"
