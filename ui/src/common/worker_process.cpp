#include "cnnstudio/ui/common/worker_process.h"

#include <csignal>
#include <sys/types.h>
#include <unistd.h>

#include <utility>

namespace cnnstudio::ui {

void startsOwnProcessGroup(QProcess& process) {
    process.setChildProcessModifier([] { ::setpgid(0, 0); });
}

void killProcessGroup(QProcess& process) {
    const qint64 pid = process.processId();
    if (pid > 0) ::kill(-pid_t(pid), SIGKILL);
    process.kill();
}

QList<QByteArray> LineSplitter::append(const QByteArray& bytes) {
    pending_ += bytes;
    QList<QByteArray> lines;
    qsizetype newline;
    while ((newline = pending_.indexOf('\n')) >= 0) {
        lines << pending_.left(newline);
        pending_.remove(0, newline + 1);
    }
    return lines;
}

QByteArray LineSplitter::rest() { return std::exchange(pending_, {}); }

void StderrTail::append(const QByteArray& bytes) {
    for (const QByteArray& line : splitter_.append(bytes)) keep(line);
}

QStringList StderrTail::finish() {
    if (const QByteArray rest = splitter_.rest(); !rest.trimmed().isEmpty()) keep(rest);
    return lines_;
}

void StderrTail::clear() {
    splitter_.clear();
    lines_.clear();
}

void StderrTail::keep(const QByteArray& line) {
    lines_ << QString::fromUtf8(line).trimmed();
    while (lines_.size() > linesKept_) lines_.removeFirst();
}

}  // namespace cnnstudio::ui
