#include "cnnstudio/ui/training/run_settings.h"

#include <QRegularExpression>
#include <QThread>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/datasets/augmentation.h"
#include "cnnstudio/datasets/dataset_spec.h"
#include "cnnstudio/error.h"
#include "cnnstudio/model_library.h"

namespace cnnstudio::ui {

QStringList RunSettings::problems() const {
    QStringList found;
    const auto backends = knownBackends();
    if (std::find(backends.begin(), backends.end(), backend.toStdString()) == backends.end())
        found << QObject::tr("Unknown backend '%1': pick one from the list.").arg(backend);
    else if (const std::string why = backendUnavailableReason(backend.toStdString()); !why.empty())
        found << QObject::tr("The %1 backend cannot run here: %2.").arg(backend, QString::fromStdString(why));
    if (!QStringList{"fp32", "tf32", "bf16"}.contains(precision))
        found << QObject::tr("Unknown precision '%1': use fp32, tf32 or bf16.").arg(precision);
    else if (!backendTrainsIn(backend.toStdString(), precision.toStdString()))
        found << QObject::tr("The %1 backend trains in %2, so the worker would refuse %3: pick one of those, or %4.")
                     .arg(backend, trainedPrecisionsText(backend), precision,
                          precision == "tf32" ? QObject::tr("the cudnn backend for tf32")
                                              : QObject::tr("a GPU backend for bf16 (the cpu backend's bf16 needs a "
                                                            "CPU with AVX512-BF16 or AMX)"));
    if (!QStringList{"sgd", "adam", "adamw"}.contains(optimizer))
        found << QObject::tr("Unknown optimiser '%1': use sgd, adam or adamw.").arg(optimizer);
    if (!QStringList{"constant", "step", "cosine", "plateau"}.contains(schedule))
        found << QObject::tr("Unknown schedule '%1': use constant, step, cosine or plateau.").arg(schedule);
    if (batchSize < 1) found << QObject::tr("The batch size must be at least 1.");
    if (epochs < 1) found << QObject::tr("Train for at least one epoch.");
    if (!(learningRate > 0)) found << QObject::tr("The learning rate must be above zero.");
    if (limit < 0) found << QObject::tr("The image limit cannot be negative (0 uses every image).");
    if (threads < 0) found << QObject::tr("The thread count cannot be negative (0 uses every core).");
    if (!(momentum >= 0 && momentum < 1)) found << QObject::tr("The momentum must be at least 0 and below 1.");
    if (!(weightDecay >= 0 && weightDecay <= 1)) found << QObject::tr("The weight decay must be between 0 and 1.");
    if (warmupEpochs < 0) found << QObject::tr("The warm-up cannot be negative (0: none).");
    if (!(labelSmoothing >= 0 && labelSmoothing < 1))
        found << QObject::tr("The label smoothing must be at least 0 and below 1.");
    if (!QStringList{"none", "balanced"}.contains(classWeights))
        found << QObject::tr("Unknown class weights '%1': use none or balanced.").arg(classWeights);
    if (earlyStopPatience < 0) found << QObject::tr("The early-stopping patience cannot be negative (0: off).");
    for (const QString& teacher : teachers) {
        try {
            resolveModel(teacher.toStdString());
        } catch (const Error& error) {
            found << QObject::tr("Teacher '%1': %2").arg(teacher, QString::fromStdString(error.reason()));
        }
    }
    if (!teachers.isEmpty() && !(distillWeight > 0 && distillWeight <= 1))
        found << QObject::tr("The distillation weight must be above 0 and at most 1.");
    if (!teachers.isEmpty() && !(distillTemperature > 0))
        found << QObject::tr("The distillation temperature must be above zero.");
    if (logEvery < 1) found << QObject::tr("Log at least every step (1) or less often.");
    if (!usesGpu() && cpuRankCount < 1) found << QObject::tr("Use at least one CPU rank.");
    if (dataset.endsWith(':')) {
        found << QObject::tr("Choose the data set's file or folder on the Data set page.");
    } else {
        try {
            datasets::parseDatasetSpec(dataset.toStdString());
        } catch (const Error& error) {
            found << QObject::tr("Data set: %1").arg(QString::fromStdString(error.what()));
        }
    }
    try {
        datasets::parseAugmentation(augmentation.toStdString());
    } catch (const Error& error) {
        found << QObject::tr("Augmentation: %1").arg(QString::fromStdString(error.what()));
    }
    if (usesGpu()) {
        if (gpuCount < 1) found << QObject::tr("Use at least one GPU.");
        if (!gpuIndices.isEmpty() && gpuIndices.size() != gpuCount)
            found << QObject::tr("%n GPU(s) ticked for a GPU count of %1: tick as many GPUs as you use.",
                                 nullptr, int(gpuIndices.size()))
                         .arg(gpuCount);
    }
    if (nodeCount < 1) found << QObject::tr("Use at least one node.");
    if (nodeCount > 1) found << hostfileProblems(hostfileText, nodeCount, ranksPerNode());
    return found;
}

QStringList RunSettings::workerArguments(const QString& specFile, const QString& runDir,
                                         const QString& hostfilePath) const {
    const int threadCount = threads > 0 ? threads : QThread::idealThreadCount();
    QStringList arguments{
        "--spec", specFile,
        "--dataset", dataset,
        "--backend", backend,
        "--precision", precision,
        "--epochs", QString::number(epochs),
        "--batch", QString::number(batchSize),
        "--optimizer", optimizer,
        "--lr", QString::number(learningRate, 'g', 10),
        "--schedule", schedule,
        "--augment", augmentation.isEmpty() ? QStringLiteral("none") : augmentation,
        "--run-dir", runDir,
        "--events", "-",
        "--threads", QString::number(threadCount),
        "--seed", QString::number(seed),
        "--momentum", QString::number(momentum, 'g', 10),
        "--weight-decay", QString::number(weightDecay, 'g', 10),
        "--warmup-epochs", QString::number(warmupEpochs),
        "--label-smoothing", QString::number(labelSmoothing, 'g', 10),
        "--class-weights", classWeights,
        "--early-stop", QString::number(earlyStopPatience),
        "--log-every", QString::number(logEvery),
    };
    if (limit > 0) arguments << "--limit" << QString::number(limit);
    for (const QString& teacher : teachers) arguments << "--teacher" << teacher;
    if (!teachers.isEmpty())
        arguments << "--distill-weight" << QString::number(distillWeight, 'g', 10) << "--distill-temperature"
                  << QString::number(distillTemperature, 'g', 10);
    if (prediction)
        arguments << "--predicted-epoch-s" << QString::number(prediction->epochSeconds, 'g', 10) << "--predicted-total-s"
                  << QString::number(prediction->totalSeconds, 'g', 10) << "--prediction-basis" << prediction->basis;
    if (scaleLearningRate) arguments << "--scale-lr";
    if (skipBad) arguments << "--skip-bad";
    if (usesGpu() && (gpuCount > 1 || nodeCount > 1)) arguments << "--gpus" << QString::number(gpuCount);
    if (!usesGpu() && cpuRankCount > 1) arguments << "--ranks" << QString::number(cpuRankCount);
    if (nodeCount > 1) arguments << "--nodes" << QString::number(nodeCount) << "--hostfile" << hostfilePath;
    return arguments;
}

QString RunSettings::visibleDevices() const {
    if (!usesGpu() || gpuIndices.isEmpty()) return {};
    QStringList indices;
    for (int index : gpuIndices) indices << QString::number(index);
    return indices.join(',');
}

QVariantMap RunSettings::toVariantMap() const {
    QVariantList gpus;
    for (int index : gpuIndices) gpus << index;
    return {{"backend", backend},       {"precision", precision},     {"gpuCount", gpuCount},
            {"gpuIndices", gpus},       {"nodeCount", nodeCount},     {"hostfile", hostfileText},
            {"dataset", dataset},       {"batchSize", batchSize},     {"epochs", epochs},
            {"optimizer", optimizer},   {"learningRate", learningRate}, {"schedule", schedule},
            {"augmentation", augmentation}, {"threads", threads},    {"seed", seed},
            {"limit", limit},           {"cpuRankCount", cpuRankCount}, {"momentum", momentum},
            {"weightDecay", weightDecay}, {"warmupEpochs", warmupEpochs}, {"labelSmoothing", labelSmoothing},
            {"classWeights", classWeights}, {"earlyStopPatience", earlyStopPatience},
            {"scaleLearningRate", scaleLearningRate}, {"skipBad", skipBad}, {"logEvery", logEvery},
            {"teachers", teachers}, {"distillWeight", distillWeight}, {"distillTemperature", distillTemperature}};
}

RunSettings RunSettings::fromVariantMap(const QVariantMap& map) {
    RunSettings settings;
    auto text = [&](const char* key, QString& field) {
        if (map.contains(key)) field = map.value(key).toString();
    };
    auto number = [&](const char* key, int& field) {
        if (map.contains(key)) field = map.value(key).toInt();
    };
    auto decimal = [&](const char* key, double& field) {
        if (map.contains(key)) field = map.value(key).toDouble();
    };
    auto flag = [&](const char* key, bool& field) {
        if (map.contains(key)) field = map.value(key).toBool();
    };
    text("backend", settings.backend);
    text("precision", settings.precision);
    number("gpuCount", settings.gpuCount);
    if (map.contains("gpuIndices")) {
        settings.gpuIndices.clear();
        for (const QVariant& index : map.value("gpuIndices").toList()) settings.gpuIndices << index.toInt();
    }
    number("nodeCount", settings.nodeCount);
    text("hostfile", settings.hostfileText);
    text("dataset", settings.dataset);
    number("batchSize", settings.batchSize);
    number("epochs", settings.epochs);
    text("optimizer", settings.optimizer);
    decimal("learningRate", settings.learningRate);
    text("schedule", settings.schedule);
    text("augmentation", settings.augmentation);
    number("threads", settings.threads);
    number("seed", settings.seed);
    number("limit", settings.limit);
    number("cpuRankCount", settings.cpuRankCount);
    decimal("momentum", settings.momentum);
    decimal("weightDecay", settings.weightDecay);
    number("warmupEpochs", settings.warmupEpochs);
    decimal("labelSmoothing", settings.labelSmoothing);
    text("classWeights", settings.classWeights);
    number("earlyStopPatience", settings.earlyStopPatience);
    flag("scaleLearningRate", settings.scaleLearningRate);
    flag("skipBad", settings.skipBad);
    number("logEvery", settings.logEvery);
    if (map.contains("teachers")) settings.teachers = map.value("teachers").toStringList();
    decimal("distillWeight", settings.distillWeight);
    decimal("distillTemperature", settings.distillTemperature);
    return settings;
}

QString trainedPrecisionsText(const QString& backend) {
    QStringList precisions;
    for (const std::string& each : backendPrecisions(backend.toStdString())) precisions << QString::fromStdString(each);
    return precisions.join(QObject::tr(" or "));
}

QStringList hostfileProblems(const QString& text, int nodes, int ranksPerNode) {
    static const QRegularExpression hostLine(
        R"(^\s*([A-Za-z0-9_.:-]+)((?:\s+(?:slots|max_slots)=\d+)*)\s*$)");
    static const QRegularExpression slotsField(R"(\bslots=(\d+))");
    QStringList problems;
    struct Host {
        QString name;
        int slotCount;
        int line;
    };
    QList<Host> hosts;
    const QStringList lines = text.split('\n');
    for (int i = 0; i < lines.size(); ++i) {
        const QString content = lines[i].section('#', 0, 0);
        if (content.trimmed().isEmpty()) continue;
        const QRegularExpressionMatch match = hostLine.match(content);
        if (!match.hasMatch()) {
            problems << QObject::tr("line %1: '%2' is not 'host slots=N'").arg(i + 1).arg(content.trimmed());
            continue;
        }
        int slotCount = 1;
        if (const auto slotMatch = slotsField.match(match.captured(2)); slotMatch.hasMatch())
            slotCount = slotMatch.captured(1).toInt();
        if (slotCount < 1) problems << QObject::tr("line %1: slots must be at least 1").arg(i + 1);
        hosts.append({match.captured(1), slotCount, i + 1});
    }
    if (hosts.size() < nodes)
        problems << QObject::tr("the hostfile lists %n host(s), %1 nodes are asked for", nullptr, int(hosts.size()))
                        .arg(nodes);
    for (int i = 0; i < std::min<int>(nodes, int(hosts.size())); ++i)
        if (hosts[i].slotCount < ranksPerNode)
            problems << QObject::tr("line %1: %2 has %n slot(s), each node runs %3 rank(s)", nullptr, hosts[i].slotCount)
                            .arg(hosts[i].line)
                            .arg(hosts[i].name)
                            .arg(ranksPerNode);
    return problems;
}

}  // namespace cnnstudio::ui
