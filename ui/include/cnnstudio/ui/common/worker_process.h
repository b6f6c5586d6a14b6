#pragma once
// What the pages that run a worker program share (cnnstudio-train for training, cnnstudio-bench
// for sweeps): the worker leads its own process group, so that Kill and Cancel reach the mpirun
// it may start and every rank with it; and its output arrives in pieces that are cut into lines.
#include <QByteArray>
#include <QList>
#include <QProcess>
#include <QStringList>

namespace cnnstudio::ui {

// Before start(): the child calls setpgid(0, 0), leading a group of its own.
void startsOwnProcessGroup(QProcess& process);
// SIGKILL to the whole group (the worker, its mpirun, the ranks), then to the process itself.
void killProcessGroup(QProcess& process);

// Bytes in, complete lines out (without the newline); a line cut between two reads waits for
// its end. rest() hands over what never got a newline, when the process has ended.
class LineSplitter {
public:
    QList<QByteArray> append(const QByteArray& bytes);
    QByteArray rest();
    void clear() { pending_.clear(); }

private:
    QByteArray pending_;
};

// The last lines of a worker's standard error: what a failure message quotes.
class StderrTail {
public:
    explicit StderrTail(int linesKept) : linesKept_(linesKept) {}
    void append(const QByteArray& bytes);
    // The tail with the unfinished last line, once the process has ended.
    QStringList finish();
    QStringList lines() const { return lines_; }
    void clear();

private:
    void keep(const QByteArray& line);
    int linesKept_;
    LineSplitter splitter_;
    QStringList lines_;
};

}  // namespace cnnstudio::ui
