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
    QString status;           // "completed", "stopped", "stopped early", "failed", "unfinished"
    QString failureReason;
    QJsonObject config;       // config.json, empty when missing or unreadable
    QString problem;          // why the folder could not be read completely; empty when fine
    bool resumable = false;   // stopped, failed or unfinished, and config.json is there
};

QString defaultRunsRoot();  // ~/CNNStudio/runs
// One run folder. Never throws: what cannot be read is said in RunRecord::problem.
RunRecord readRunRecord(const QString& directory);
// Every sub-folder of root holding an events.jsonl or a config.json, newest first.
QList<RunRecord> scanRunsFolder(const QString& root);

}  // namespace cnnstudio::ui
