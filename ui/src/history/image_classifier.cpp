#include "cnnstudio/ui/history/image_classifier.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include "cnnstudio/run_folder.h"
#include "cnnstudio/ui/training/training_controller.h"

namespace cnnstudio::ui {

QList<ClassScore> parsePredictOutput(const QString& output) {
    // predict prints the image's path, then "  <class> <percent>%" for each class it shows.
    static const QRegularExpression scoreLine(R"(^\s+(.+?)\s+([0-9]+(?:\.[0-9]+)?)%\s*$)");
    QList<ClassScore> scores;
    const QStringList lines = output.split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QRegularExpressionMatch match = scoreLine.match(lines[i]);
        if (!match.hasMatch()) break;  // the next image, or the end
        scores.append({match.captured(1), match.captured(2).toDouble() / 100.0});
    }
    return scores;
}

bool hasTrainedModel(const QString& runDirectory) {
    return QFileInfo::exists(QDir(runDirectory).filePath(QStringLiteral("%1/%2").arg(
        RunFolder::kModelFolderName, RunFolder::kModelInfoFileName)));
}

ImageClassifier::ImageClassifier(QObject* parent)
    : QObject(parent), workerProgram_(TrainingController::defaultWorkerProgram()) {}

ImageClassifier::~ImageClassifier() {
    if (isRunning()) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);
    }
}

void ImageClassifier::classify(const QString& runDirectory, const QString& imagePath, int top) {
    if (isRunning()) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);
    }
    if (process_) process_->deleteLater();
    process_ = new QProcess(this);
    process_->setProgram(workerProgram_);
    process_->setArguments({"predict", runDirectory, imagePath, "--top", QString::number(top)});
    connect(process_, &QProcess::finished, this, &ImageClassifier::handleExit);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            emit failed(tr("Could not start %1: %2").arg(workerProgram_, process_->errorString()));
    });
    process_->start(QIODevice::ReadOnly);
}

void ImageClassifier::handleExit(int exitCode, QProcess::ExitStatus status) {
    const QString output = QString::fromUtf8(process_->readAllStandardOutput());
    const QString errors = QString::fromUtf8(process_->readAllStandardError()).trimmed();
    if (status == QProcess::NormalExit && exitCode == 0) {
        const QList<ClassScore> scores = parsePredictOutput(output);
        if (!scores.isEmpty()) {
            emit classified(scores);
            return;
        }
    }
    // The worker's message names the model folder or image at fault; drop its program prefix.
    QString reason = errors.section('\n', 0, 0).remove(QRegularExpression("^cnnstudio-train: (error: )?"));
    if (reason.isEmpty()) reason = tr("The worker ended without classifying the image (exit code %1).").arg(exitCode);
    emit failed(reason);
}

}  // namespace cnnstudio::ui
