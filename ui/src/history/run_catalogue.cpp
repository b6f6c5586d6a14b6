#include "cnnstudio/ui/history/run_catalogue.h"

#include <algorithm>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/event_reader.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/ui/training/training_run.h"

namespace cnnstudio::ui {

QString defaultRunsRoot() { return QDir::home().filePath("CNNStudio/runs"); }

namespace {

QString runFile(const QDir& folder, const char* name) { return folder.filePath(QString::fromLatin1(name)); }

QString latestCheckpointFolder(const QDir& folder) {
    return folder.filePath(QStringLiteral("%1/%2").arg(RunFolder::kCheckpointsFolderName, RunFolder::kLatestCheckpoint));
}

// config.json, or why it could not be read (empty when it is fine or missing).
QString readConfig(const QDir& folder, QJsonObject& config) {
    QFile file(runFile(folder, RunFolder::kConfigFileName));
    if (!file.open(QIODevice::ReadOnly)) return {};
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error == QJsonParseError::NoError && document.isObject()) {
        config = document.object();
        return {};
    }
    return QObject::tr("%1 is not valid JSON: %2").arg(RunFolder::kConfigFileName, error.errorString());
}

// The network's name from spec.json: what a run that failed before it began is known by.
QString specName(const QDir& folder) {
    QFile file(runFile(folder, RunFolder::kSpecFileName));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object().value("name").toString();
}

// Why the latest checkpoint cannot be resumed from, or empty (also when there is none).
QString checkpointDamage(const QDir& folder) {
    const QString latest = latestCheckpointFolder(folder);
    if (!QFileInfo(latest).isDir()) return {};
    if (!checkpointExists(latest.toStdString()))
        return QObject::tr("the latest checkpoint has no progress record");
    try {
        readCheckpointWeights(latest.toStdString());
    } catch (const Error& error) {
        return QObject::tr("the latest checkpoint is unreadable: %1").arg(QString::fromStdString(error.what()));
    }
    return {};
}

}  // namespace

RunRecord readRunRecord(const QString& directory) {
    RunRecord record;
    const QDir folder(directory);
    record.directory = folder.absolutePath();
    record.name = folder.dirName();
    record.started = QFileInfo(directory).lastModified();
    record.problem = readConfig(folder, record.config);
    record.damaged = !record.problem.isEmpty();

    TrainingRun run;
    const QString eventsFile = runFile(folder, RunFolder::kEventsFileName);
    if (QFileInfo::exists(eventsFile)) {
        try {
            const EventLog log = readEvents(eventsFile.toStdString());
            if (!log.events.empty()) {
                const QDateTime time =
                    QDateTime::fromString(QString::fromStdString(log.events.front().time), Qt::ISODateWithMs);
                if (time.isValid()) record.started = time.toLocalTime();
            }
            for (const cnnstudio::Event& event : log.events) run.addEvent(event);
            if (log.malformedLines > 0) {
                record.damaged = true;
                if (record.problem.isEmpty())
                    record.problem = QObject::tr("%n line(s) of %1 could not be read (cut short or garbled)", nullptr,
                                                 log.malformedLines)
                                         .arg(RunFolder::kEventsFileName);
            }
        } catch (const Error& error) {
            record.damaged = true;
            if (record.problem.isEmpty()) record.problem = QString::fromStdString(error.what());
        }
        // A run that failed (a launch mpirun could not start) or was killed before the worker
        // wrote its configuration is a run that ended so, not a damaged one: nothing in it was lost.
        if (!QFileInfo::exists(runFile(folder, RunFolder::kConfigFileName)) &&
            run.state() != TrainingRun::State::Failed && run.state() != TrainingRun::State::Killed) {
            record.damaged = true;
            if (record.problem.isEmpty())
                record.problem = QObject::tr("%1 is missing: the run cannot be resumed or evaluated")
                                     .arg(RunFolder::kConfigFileName);
        }
    } else if (record.problem.isEmpty()) {
        record.problem = QObject::tr("no %1: the run never started").arg(RunFolder::kEventsFileName);
    }

    record.model = run.modelName().isEmpty() ? specName(folder) : run.modelName();
    record.dataset = run.datasetName().isEmpty() ? record.config.value("dataset").toString() : run.datasetName();
    record.backend = run.backend().isEmpty() ? record.config.value("backend").toString() : run.backend();
    // config.json keeps the epoch count with the trainer's settings.
    const int configuredEpochs = record.config.value("trainer").toObject().value("epochs").toInt(
        record.config.value("epochs").toInt());
    record.epochsPlanned = run.totalEpochs() > 0 ? run.totalEpochs() : configuredEpochs;
    record.epochsRun = run.epochs().isEmpty() ? 0 : run.epochs().last().epoch;
    record.bestValidationAccuracy = run.bestValidationAccuracy();
    record.testAccuracy = run.testAccuracy();
    if (!run.epochs().isEmpty()) {
        record.lastValidationAccuracy = run.epochs().last().validationAccuracy;
        record.lastTrainLoss = run.epochs().last().trainLoss;
    }
    switch (run.state()) {
    case TrainingRun::State::Finished: {
        const QString reason = QString::fromStdString(run.finishedEvent()->reason);
        record.status = reason == "stopped" ? QObject::tr("stopped")
                        : reason == "early_stopped" ? QObject::tr("stopped early")
                                                     : QObject::tr("completed");
        record.resumable = reason == "stopped";
        break;
    }
    case TrainingRun::State::Killed:
        record.status = QObject::tr("killed by you");
        record.resumable = true;
        break;
    case TrainingRun::State::Failed:
        record.status = QObject::tr("failed");
        record.failureReason = run.failureReason();
        record.resumable = true;
        break;
    case TrainingRun::State::Running:
    case TrainingRun::State::Empty:
        record.status = QObject::tr("unfinished");
        record.resumable = true;
        break;
    }
    if (const QString checkpoint = checkpointDamage(folder); !checkpoint.isEmpty()) {
        record.damaged = true;
        if (record.problem.isEmpty()) record.problem = checkpoint;
    }
    if (record.damaged) record.status = QObject::tr("damaged");
    record.resumable = record.resumable && !record.damaged && !record.config.isEmpty() &&
                       QFileInfo(latestCheckpointFolder(folder)).isDir();
    return record;
}

QList<RunRecord> scanRunsFolder(const QString& root) {
    QList<RunRecord> records;
    const QDir folder(root);
    for (const QFileInfo& entry : folder.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QDir run(entry.absoluteFilePath());
        if (run.exists(RunFolder::kEventsFileName) || run.exists(RunFolder::kConfigFileName))
            records << readRunRecord(entry.absoluteFilePath());
    }
    std::sort(records.begin(), records.end(),
              [](const RunRecord& a, const RunRecord& b) { return a.started > b.started; });
    return records;
}

}  // namespace cnnstudio::ui
