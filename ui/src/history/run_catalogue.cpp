#include "cnnstudio/ui/history/run_catalogue.h"

#include <algorithm>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include "cnnstudio/ui/training/training_run.h"

namespace cnnstudio::ui {

QString defaultRunsRoot() { return QDir::home().filePath("CNNStudio/runs"); }

RunRecord readRunRecord(const QString& directory) {
    RunRecord record;
    const QDir folder(directory);
    record.directory = folder.absolutePath();
    record.name = folder.dirName();
    record.started = QFileInfo(directory).lastModified();

    QFile configFile(folder.filePath("config.json"));
    if (configFile.open(QIODevice::ReadOnly)) {
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(configFile.readAll(), &error);
        if (error.error == QJsonParseError::NoError && document.isObject()) record.config = document.object();
        else record.problem = QObject::tr("config.json is not valid JSON: %1").arg(error.errorString());
    }

    TrainingRun run;
    QFile events(folder.filePath("events.jsonl"));
    if (events.open(QIODevice::ReadOnly)) {
        int malformed = 0;
        bool firstEvent = true;
        while (!events.atEnd()) {
            const QByteArray line = events.readLine().trimmed();
            if (line.isEmpty()) continue;
            const QJsonDocument document = QJsonDocument::fromJson(line);
            if (!document.isObject()) {
                ++malformed;
                continue;
            }
            if (firstEvent) {
                const QDateTime time = QDateTime::fromString(document.object().value("time").toString(), Qt::ISODateWithMs);
                if (time.isValid()) record.started = time.toLocalTime();
                firstEvent = false;
            }
            run.addEvent(document.object());
        }
        if (malformed > 0 && record.problem.isEmpty())
            record.problem = QObject::tr("%n line(s) of events.jsonl could not be read", nullptr, malformed);
    } else if (record.problem.isEmpty()) {
        record.problem = QObject::tr("no events.jsonl: the run never started");
    }

    record.model = run.modelName();
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
        const QString reason = run.finishedEvent().value("reason").toString();
        record.status = reason == "stopped" ? QObject::tr("stopped")
                        : reason == "early_stopped" ? QObject::tr("stopped early")
                                                     : QObject::tr("completed");
        record.resumable = reason == "stopped";
        break;
    }
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
    record.resumable = record.resumable && !record.config.isEmpty() &&
                       QFileInfo(folder.filePath("checkpoints/latest")).isDir();
    return record;
}

QList<RunRecord> scanRunsFolder(const QString& root) {
    QList<RunRecord> records;
    const QDir folder(root);
    for (const QFileInfo& entry : folder.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QDir run(entry.absoluteFilePath());
        if (run.exists("events.jsonl") || run.exists("config.json")) records << readRunRecord(entry.absoluteFilePath());
    }
    std::sort(records.begin(), records.end(),
              [](const RunRecord& a, const RunRecord& b) { return a.started > b.started; });
    return records;
}

}  // namespace cnnstudio::ui
