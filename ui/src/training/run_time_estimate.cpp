#include "cnnstudio/ui/training/run_time_estimate.h"

#include <algorithm>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QThread>

#include "cnnstudio/bench_measure.h"
#include "cnnstudio/error.h"

namespace cnnstudio::ui {
namespace {

QString qt(const std::string& text) { return QString::fromStdString(text); }

int threadsOf(const RunSettings& settings) {
    return settings.threads > 0 ? settings.threads : QThread::idealThreadCount();
}

}  // namespace

std::optional<RunSettings::Prediction> RunTimeEstimate::forWorker() const {
    if (!prediction) return std::nullopt;
    return RunSettings::Prediction{prediction->epochSeconds, prediction->totalSeconds, qt(prediction->basis)};
}

RunTimeEstimate estimateRunTime(const NetworkSpec& trainedSpec, const RunSettings& settings, const DatasetSummary& data,
                                const BenchReport& report, const QString& reportName) {
    RunTimeEstimate estimate;
    if (data.trainSize <= 0) {
        estimate.text = QObject::tr("Predicted run time: once the data set has been read");
        return estimate;
    }
    BenchNetwork network;
    try {
        network = describeNetwork(trainedSpec);
    } catch (const Error&) {
        estimate.text = QObject::tr("Predicted run time: none while the network has problems");
        return estimate;
    }
    RunTimeQuery query;
    query.networkName = network.name;
    query.trainGflopPerImage = network.trainGflopPerImage;
    query.trainImages = settings.limit > 0 ? std::min<qint64>(settings.limit, data.trainSize) : data.trainSize;
    query.validationImages = data.validationSize;
    query.epochs = settings.epochs;
    query.backend = settings.backend.toStdString();
    query.precision = settings.precision.toStdString();
    query.threads = threadsOf(settings);
    query.batch = settings.batchSize;
    query.ranks = settings.ranksPerNode() * settings.nodeCount;
    estimate.prediction = predictRunTime(query, report, reportName.toStdString());
    if (!estimate.prediction) {
        estimate.needsProbe = true;
        estimate.text = QObject::tr("Predicted run time: %1 has not measured %2 %3; measure it in a few seconds")
                            .arg(reportName, settings.backend, qt(query.precision));
        return estimate;
    }
    const QString epoch = qt(formatApproximateDuration(estimate.prediction->epochSeconds));
    const QString total = qt(formatApproximateDuration(estimate.prediction->totalSeconds));
    if (estimate.prediction->scaledByFlops) {
        // FLOPs leave out what differs between networks (memory traffic, layer shapes, batch
        // norm): fer-cnn predicted from lenet5 was 3x too slow (audit, 2026-12-04).
        estimate.needsProbe = true;
        estimate.text = QObject::tr("Rough prediction: epoch %1, total %2 (from %3; scaling another network's "
                                    "speed by FLOPs can be several times off: measure this one)")
                            .arg(epoch, total, qt(estimate.prediction->basis));
    } else {
        estimate.text = QObject::tr("Predicted: epoch %1, total %2 (from %3)").arg(epoch, total, qt(estimate.prediction->basis));
    }
    return estimate;
}

RunTimeEstimate estimateRunTimeFromFolder(const NetworkSpec& trainedSpec, const RunSettings& settings,
                                          const DatasetSummary& data, const std::filesystem::path& folder) {
    const auto latest = latestReportOfMachine(folder, QSysInfo::machineHostName().toStdString());
    if (!latest) {
        RunTimeEstimate estimate;
        estimate.needsProbe = true;
        estimate.text = QObject::tr("Predicted run time: no benchmark of this machine yet (Hardware page or "
                                    "cnnstudio-bench); measure it in a few seconds");
        return estimate;
    }
    return estimateRunTime(trainedSpec, settings, data, latest->second, qt(latest->first.filename().string()));
}

QString probeKey(const NetworkSpec& trainedSpec, const RunSettings& settings) {
    QCryptographicHash layers(QCryptographicHash::Sha1);
    // The name too: the prediction takes a report for this network by its name and FLOPs.
    layers.addData(QByteArray::fromStdString(trainedSpec.name + '\n' + trainedSpec.toJson().at("nodes").dump()));
    return QStringLiteral("%1-%2-%3threads-batch%4-%5")
        .arg(settings.backend, settings.precision)
        .arg(threadsOf(settings))
        .arg(settings.batchSize)
        .arg(QString::fromLatin1(layers.result().toHex().left(16)));
}

void keepProbeReport(const std::filesystem::path& folder, const QString& key, const BenchReport& report) {
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error)
        throw Error("cannot make the folder for kept probes: " + error.message(), folder.string(),
                    "check that the hardware folder is writable");
    saveBenchReport(report, folder / (key.toStdString() + ".json"));
}

std::optional<BenchReport> keptProbeReport(const std::filesystem::path& folder, const QString& key) {
    const std::filesystem::path file = folder / (key.toStdString() + ".json");
    if (!std::filesystem::exists(file)) return std::nullopt;
    try {
        return loadBenchReport(file);
    } catch (const Error&) {
        return std::nullopt;  // a broken copy is as good as none: the next probe writes it again
    }
}

QString predictedBesideActual(double predictedTotalSeconds, double actualSeconds) {
    if (predictedTotalSeconds <= 0) return {};
    return QObject::tr("predicted %1, actual %2")
        .arg(qt(formatApproximateDuration(predictedTotalSeconds)), qt(formatApproximateDuration(actualSeconds)));
}

// ---- RunTimeProbe -----------------------------------------------------------------------------

RunTimeProbe::RunTimeProbe(QObject* parent, QString benchProgram)
    : QObject(parent),
      program_(benchProgram.isEmpty() ? QDir(QCoreApplication::applicationDirPath()).filePath("cnnstudio-bench")
                                      : std::move(benchProgram)) {}

RunTimeProbe::~RunTimeProbe() {
    if (process_ && process_->state() != QProcess::NotRunning) {
        process_->kill();
        process_->waitForFinished(3000);
    }
}

bool RunTimeProbe::isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }

bool RunTimeProbe::start(const NetworkSpec& spec, const RunSettings& settings) {
    if (isRunning()) return false;
    scratch_ = std::make_unique<QTemporaryDir>();
    if (!scratch_->isValid()) {
        emit failed(tr("cannot make a temporary folder for the probe: %1").arg(scratch_->errorString()));
        return true;
    }
    const QString specFile = scratch_->filePath("spec.json");
    try {
        spec.save(specFile.toStdString());
    } catch (const Error& error) {
        emit failed(QString::fromStdString(error.what()));
        return true;
    }
    const QString& precision = settings.precision;
    const QStringList arguments{"--probe", "--model", specFile, "--config",
                                QStringLiteral("%1 %2 threads=%3 batch=%4")
                                    .arg(settings.backend, precision)
                                    .arg(threadsOf(settings))
                                    .arg(settings.batchSize),
                                "--report", scratch_->filePath("probe.json"), "--no-json-lines"};
    if (!process_) {
        process_ = new QProcess(this);
        process_->setProcessChannelMode(QProcess::SeparateChannels);
        connect(process_, &QProcess::finished, this, [this](int exitCode) { onFinished(exitCode); });
        connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
            if (error == QProcess::FailedToStart)
                emit failed(tr("cannot start %1: %2").arg(program_, process_->errorString()));
        });
    }
    process_->start(program_, arguments);
    return true;
}

void RunTimeProbe::onFinished(int exitCode) {
    const QString reportFile = scratch_->filePath("probe.json");
    const QString errors = QString::fromUtf8(process_->readAllStandardError()).trimmed();
    if (!QFileInfo::exists(reportFile)) {
        emit failed(tr("the probe ended (status %1) without a report: %2").arg(exitCode).arg(errors.right(400)));
        return;
    }
    try {
        BenchReport report = loadBenchReport(reportFile.toStdString());
        if (report.configurations.empty() || !report.configurations.front().ok()) {
            emit failed(report.configurations.empty() ? tr("the probe measured nothing")
                                                      : qt(report.configurations.front().error));
            return;
        }
        emit measured(report);
    } catch (const Error& error) {
        emit failed(qt(error.what()));
    }
}

}  // namespace cnnstudio::ui
