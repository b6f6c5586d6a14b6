// RunTimeEstimate: the Train page's predicted run time of the next run — epoch and total — from
// a probe of this very network (RunTimeProbe: `cnnstudio-bench --probe`, a few seconds in the
// worker; kept across sessions, see keptProbeReport) or else the latest benchmark report of this
// machine (cnnstudio/bench_report.h: the sweeps of the Hardware page and of cnnstudio-bench are
// saved to hardwareReportFolder()). A report of another network is scaled by FLOPs, which can be
// several times off: the text says the prediction is rough and the probe is offered. No widgets:
// TrainArea shows it, the tests drive it directly.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include <QObject>
#include <QString>

#include "cnnstudio/bench_report.h"
#include "cnnstudio/run_time_prediction.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/training/dataset_preview.h"
#include "cnnstudio/ui/training/run_settings.h"

class QProcess;
class QTemporaryDir;

namespace cnnstudio::ui {

struct RunTimeEstimate {
    std::optional<RunTimePrediction> prediction;
    QString text;      // "Predicted: epoch ~12 s, total ~2 min (from 'cudnn bf16' in …)" or why not
    // Nothing measured this network with this backend and precision: a probe would predict, or
    // predict better than another network's speed scaled by FLOPs.
    bool needsProbe = false;

    // For RunSettings::prediction: what the worker records in config.json.
    std::optional<RunSettings::Prediction> forWorker() const;
};

// The prediction for `trainedSpec` (the network the run trains: NetworkFit::trainedSpec, or the
// drawn one while the fit is not known) trained with `settings` on the data set `data`
// summarises, from `report` (named `reportName` in the text).
RunTimeEstimate estimateRunTime(const NetworkSpec& trainedSpec, const RunSettings& settings, const DatasetSummary& data,
                                const BenchReport& report, const QString& reportName);
// The same from the newest report of this machine (by host name) in `folder`; says so when
// there is none.
RunTimeEstimate estimateRunTimeFromFolder(const NetworkSpec& trainedSpec, const RunSettings& settings,
                                          const DatasetSummary& data, const std::filesystem::path& folder);
// Probes kept across sessions: one report per network as the run trains it (its name and layers,
// not its layout), backend, precision, CPU threads and batch, each a file in `folder` (the
// hardware folder's probes/). probeKey names the file; keepProbeReport throws Error naming it;
// keptProbeReport is none when there is no such file or it cannot be read (the probe measures again).
QString probeKey(const NetworkSpec& trainedSpec, const RunSettings& settings);
void keepProbeReport(const std::filesystem::path& folder, const QString& key, const BenchReport& report);
std::optional<BenchReport> keptProbeReport(const std::filesystem::path& folder, const QString& key);

// "Predicted ~2 min, took 1 min 50 s" for a finished run; empty without a prediction.
QString predictedBesideActual(double predictedTotalSeconds, double actualSeconds);

// A few seconds' measurement of the next run's configuration by `cnnstudio-bench --probe` (the
// GUI never runs the math), its report read back when it ends.
class RunTimeProbe : public QObject {
    Q_OBJECT

public:
    // benchProgram: the cnnstudio-bench beside the app by default.
    explicit RunTimeProbe(QObject* parent = nullptr, QString benchProgram = {});
    ~RunTimeProbe() override;

    bool isRunning() const;
    void setBenchProgram(const QString& program) { program_ = program; }
    // Refuses (returns false, with failed() not emitted) while one runs.
    bool start(const NetworkSpec& spec, const RunSettings& settings);

signals:
    void measured(const cnnstudio::BenchReport& report);
    void failed(const QString& reason);

private:
    void onFinished(int exitCode);

    QString program_;
    QProcess* process_ = nullptr;
    std::unique_ptr<QTemporaryDir> scratch_;
};

}  // namespace cnnstudio::ui
