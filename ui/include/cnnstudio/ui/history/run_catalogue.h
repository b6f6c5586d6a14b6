// The runs under a runs folder (default ~/CNNStudio/runs): one record per run folder, from its
// config.json and its events.jsonl — what was trained on what, how far it got, how it ended.
#pragma once

#include <optional>

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace cnnstudio::ui {

struct RunRecord {
    QString directory;
    QString name;             // the folder's name
    QDateTime started;        // the first event's time, else the folder's
    QString model, dataset, backend;
    int epochsRun = 0, epochsPlanned = 0;
    std::optional<double> bestValidationAccuracy, lastValidationAccuracy, testAccuracy, lastTrainLoss;
    QString status;           // "completed", "stopped", "stopped early", "failed", "unfinished", "damaged"
    QString failureReason;
    QJsonObject config;       // config.json, empty when missing or unreadable
    QString problem;          // why the folder could not be read completely; empty when fine
    // A folder that cannot be used as it is: config.json missing or unreadable, lines of
    // events.jsonl cut or garbled, or the latest checkpoint unreadable (its checksums included).
    // The status says "damaged" and `problem` why.
    bool damaged = false;
    bool resumable = false;   // stopped, failed or unfinished, not damaged, and config.json is there
};

QString defaultRunsRoot();  // ~/CNNStudio/runs
// One run folder. Never throws: what cannot be read is said in RunRecord::problem. Reads the
// latest checkpoint's weights to verify them (a few MB for the presets).
RunRecord readRunRecord(const QString& directory);
// Every sub-folder of root holding an events.jsonl or a config.json, newest first.
QList<RunRecord> scanRunsFolder(const QString& root);

}  // namespace cnnstudio::ui
