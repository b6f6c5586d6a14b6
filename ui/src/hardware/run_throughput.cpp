#include "cnnstudio/ui/hardware/run_throughput.h"

#include <algorithm>
#include <map>
#include <vector>

#include <QDir>
#include <QObject>

#include "cnnstudio/event_reader.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/ui/common/formatting.h"

namespace cnnstudio::ui {
namespace {

double median(std::vector<double> values) {
    std::ranges::sort(values);
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

QString hardwareName(const nlohmann::json& hardware, bool gpu) {
    const nlohmann::json gpus = hardware.value("gpus", nlohmann::json::array());
    if (gpu && gpus.is_array() && !gpus.empty() && gpus[0].is_object())
        return QString::fromStdString(gpus[0].value("name", std::string()));
    const nlohmann::json cpu = hardware.value("cpu", nlohmann::json::object());
    return cpu.is_object() ? QString::fromStdString(cpu.value("name", std::string())) : QString();
}

}  // namespace

std::optional<RunThroughput> measuredRunThroughput(const QString& runDirectory) {
    EventLog log;
    try {
        log = readEvents(QDir(runDirectory).filePath(RunFolder::kEventsFileName).toStdString());
    } catch (const std::exception&) {
        return std::nullopt;  // no events: not a finished run
    }
    RunThroughput run;
    run.runDirectory = runDirectory;
    std::vector<double> epochs;
    bool finished = false;
    for (const Event& event : log.events) {
        if (const auto* started = event.as<RunStartedEvent>()) {
            run.model = QString::fromStdString(started->model.name);
            run.dataset = QString::fromStdString(started->dataset.name);
            run.backend = QString::fromStdString(started->backend);
            run.precision = QString::fromStdString(started->config.value("precision", std::string("fp32")));
            run.threads = started->config.value("threads", 0);
            run.ranks = started->ranks;
            run.hardware = hardwareName(started->hardware, run.backend == "cuda" || run.backend == "cudnn");
        } else if (const auto* epoch = event.as<EpochEvent>()) {
            if (epoch->imagesPerSecond > 0) epochs.push_back(epoch->imagesPerSecond);
        } else if (event.as<FinishedEvent>()) {
            finished = true;
        }
    }
    if (!finished || epochs.empty()) return std::nullopt;
    run.epochs = int(epochs.size());
    run.imagesPerSecond = median(std::move(epochs));
    return run;
}

QList<RunThroughputGroup> groupRunThroughputs(const QList<RunThroughput>& runs) {
    std::map<QString, std::pair<RunThroughputGroup, std::vector<double>>> groups;
    for (const RunThroughput& run : runs) {
        QString settings = run.backend + ' ' + run.precision;
        if (run.backend == "cpu")
            settings += run.threads > 0 ? ", " + countOf(run.threads, QObject::tr("thread"), QObject::tr("threads")) : QObject::tr(", every core");
        if (run.ranks > 1) settings += QObject::tr(", %1 ranks").arg(run.ranks);
        const QString label = QStringLiteral("%1 · %2 · %3").arg(run.model, settings, run.hardware);
        auto& [group, values] = groups[label];
        group.label = label;
        group.backend = run.backend;
        values.push_back(run.imagesPerSecond);
    }
    QList<RunThroughputGroup> result;
    for (auto& [label, entry] : groups) {
        entry.first.runs = int(entry.second.size());
        entry.first.medianImagesPerSecond = median(entry.second);
        result << entry.first;
    }
    std::ranges::sort(result, std::greater{}, &RunThroughputGroup::medianImagesPerSecond);
    return result;
}

QList<RunThroughput> scanRunThroughputs(const QString& runsRoot) {
    QList<RunThroughput> runs;
    const QDir root(runsRoot);
    for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (auto run = measuredRunThroughput(root.filePath(name))) runs << *run;
    return runs;
}

}  // namespace cnnstudio::ui
