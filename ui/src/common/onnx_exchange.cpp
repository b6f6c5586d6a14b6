#include "cnnstudio/ui/common/onnx_exchange.h"

#include <QRegularExpression>

namespace cnnstudio::ui {

OnnxExchange::OnnxExchange(const QString& workerProgram, QObject* parent)
    : QObject(parent), workerProgram_(workerProgram) {}

OnnxExchange::~OnnxExchange() {
    if (isRunning()) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);
    }
}

void OnnxExchange::exportModel(const QString& model, const QString& onnxFile) {
    run({"export", model, "--onnx", onnxFile}, onnxFile);
}

void OnnxExchange::importModel(const QString& onnxFile, const QString& modelFolder) {
    run({"import", onnxFile, "--out", modelFolder}, modelFolder);
}

void OnnxExchange::run(const QStringList& arguments, const QString& written) {
    if (isRunning()) {
        emit failed(tr("An export or import is still running; wait for it to finish."));
        return;
    }
    if (process_) process_->deleteLater();
    written_ = written;
    process_ = new QProcess(this);
    process_->setProgram(workerProgram_);
    process_->setArguments(arguments);
    connect(process_, &QProcess::finished, this, &OnnxExchange::handleExit);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            emit failed(tr("Could not start %1: %2").arg(workerProgram_, process_->errorString()));
    });
    process_->start(QIODevice::ReadOnly);
}

void OnnxExchange::handleExit(int exitCode, QProcess::ExitStatus status) {
    if (status == QProcess::NormalExit && exitCode == 0) {
        emit finished(written_);
        return;
    }
    // The worker's message names the file or node at fault; drop its program prefix.
    const QString errors = QString::fromUtf8(process_->readAllStandardError()).trimmed();
    QString reason = errors.section('\n', 0, 0).remove(QRegularExpression("^cnnstudio-train: (error: )?"));
    if (reason.isEmpty()) reason = tr("The worker ended without writing anything (exit code %1).").arg(exitCode);
    emit failed(reason);
}

}  // namespace cnnstudio::ui
