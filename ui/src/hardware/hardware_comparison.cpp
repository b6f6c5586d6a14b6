#include "cnnstudio/ui/hardware/hardware_comparison.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <QFileInfo>
#include <QRegularExpression>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"
#include "cnnstudio/ui/common/formatting.h"

namespace cnnstudio::ui {
namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

// Three significant figures at most: 1234.5 -> "1235", 12.345 -> "12.3", 0.5 -> "0.500".
QString number(double value) {
    if (value >= 100) return QString::number(value, 'f', 0);
    return QString::number(value, 'g', 3);
}

QString csvField(const QString& field) {
    if (!field.contains(QRegularExpression("[\",\r\n]"))) return field;
    QString quoted = field;
    quoted.replace('"', "\"\"");
    return '"' + quoted + '"';
}

}  // namespace

QString scalingAxisTitle(ScalingAxis axis) {
    return axis == ScalingAxis::Ranks ? QObject::tr("ranks (GPUs × nodes)") : QObject::tr("CPU threads");
}

HardwareComparison::HardwareComparison(QObject* parent) : QObject(parent) {}

void HardwareComparison::showReport(BenchReport report, const QString& source) {
    reports_.clear();
    reports_.push_back({std::move(report), source});
    if (baseline_.kind == BaselineChoice::Kind::Configuration) baseline_ = {};
    emit changed();
}

void HardwareComparison::overlayReport(BenchReport report, const QString& source) {
    reports_.push_back({std::move(report), source});
    emit changed();
}

void HardwareComparison::openReportFile(const QString& path) {
    showReport(loadBenchReport(path.toStdString()), path);
}

void HardwareComparison::overlayReportFile(const QString& path) {
    const QString file = QFileInfo(path).canonicalFilePath();
    for (int i = 0; i < int(reports_.size()); ++i)
        if (!file.isEmpty() && QFileInfo(reports_[std::size_t(i)].source).canonicalFilePath() == file)
            throw Error(QObject::tr("this report is already on show, as %1").arg(machineLabel(i)).toStdString(),
                        path.toStdString(), QObject::tr("overlay another machine's report").toStdString());
    overlayReport(loadBenchReport(path.toStdString()), path);
}

void HardwareComparison::removeReport(int reportIndex) {
    if (reportIndex < 0 || reportIndex >= int(reports_.size())) return;
    reports_.erase(reports_.begin() + reportIndex);
    if (baseline_.kind == BaselineChoice::Kind::Configuration) {
        if (baseline_.reportIndex == reportIndex) baseline_ = {};
        else if (baseline_.reportIndex > reportIndex) --baseline_.reportIndex;
    }
    emit changed();
}

void HardwareComparison::clear() {
    reports_.clear();
    baseline_ = {};
    emit changed();
}

void HardwareComparison::saveReport(int reportIndex, const QString& path) {
    if (reportIndex < 0 || reportIndex >= int(reports_.size()))
        throw Error("there is no report to save", path.toStdString(), "run a sweep or open a report first");
    saveBenchReport(reports_[std::size_t(reportIndex)].report, path.toStdString());
    reports_[std::size_t(reportIndex)].source = path;
    emit changed();
}

void HardwareComparison::setMachineLabel(int reportIndex, const QString& label) {
    if (reportIndex < 0 || reportIndex >= int(reports_.size()) || label.trimmed().isEmpty()) return;
    reports_[std::size_t(reportIndex)].report.machine.label = label.trimmed().toStdString();
    emit changed();
}

void HardwareComparison::setBaseline(const BaselineChoice& baseline) {
    if (baseline == baseline_) return;
    baseline_ = baseline;
    emit changed();
}

QString HardwareComparison::machineLabel(int reportIndex) const {
    const BenchMachine& machine = reports_[std::size_t(reportIndex)].report.machine;
    return qs(machine.label.empty() ? machine.hostname : machine.label);
}

QString HardwareComparison::prefixed(int reportIndex, const QString& text) const {
    return overlaid() ? machineLabel(reportIndex) + QStringLiteral(": ") + text : text;
}

std::optional<std::pair<int, const BenchConfiguration*>> HardwareComparison::findBaseline() const {
    if (baseline_.kind == BaselineChoice::Kind::Configuration) {
        if (baseline_.reportIndex < 0 || baseline_.reportIndex >= int(reports_.size())) return std::nullopt;
        const BenchConfiguration* found =
            reports_[std::size_t(baseline_.reportIndex)].report.find(baseline_.label.toStdString());
        if (!found || !found->ok()) return std::nullopt;
        return std::make_pair(baseline_.reportIndex, found);
    }
    // The first report (the one opened, the others overlaid on it) that has such a configuration.
    const BenchBaseline kind = baseline_.kind == BaselineChoice::Kind::BestCpu ? BenchBaseline::BestCpu
                                                                                : BenchBaseline::CpuRefOneThread;
    for (int i = 0; i < int(reports_.size()); ++i)
        if (const BenchConfiguration* found = cnnstudio::findBaseline(reports_[std::size_t(i)].report, kind))
            return std::make_pair(i, found);
    return std::nullopt;
}

std::optional<ComparedConfiguration> HardwareComparison::baselineConfiguration() const {
    const auto found = findBaseline();
    if (!found) return std::nullopt;
    ComparedConfiguration baseline;
    baseline.reportIndex = found->first;
    baseline.machine = machineLabel(found->first);
    baseline.barLabel = prefixed(found->first, qs(found->second->label));
    baseline.configuration = *found->second;
    baseline.speedup = 1.0;
    return baseline;
}

QString HardwareComparison::baselineName() const {
    if (const auto baseline = baselineConfiguration())
        return tr("%1 (%2)").arg(qs(baseline->configuration.label), baseline->machine);
    switch (baseline_.kind) {
    case BaselineChoice::Kind::CpuRefOneThread: return tr("no cpu-ref 1-thread configuration in these reports");
    case BaselineChoice::Kind::BestCpu: return tr("no CPU configuration in these reports");
    case BaselineChoice::Kind::Configuration: return tr("the chosen configuration is not in these reports");
    }
    return {};
}

std::vector<ComparedConfiguration> HardwareComparison::comparedConfigurations() const {
    const auto baseline = findBaseline();
    std::vector<ComparedConfiguration> compared;
    for (int i = 0; i < int(reports_.size()); ++i)
        for (const BenchConfiguration& configuration : reports_[std::size_t(i)].report.configurations) {
            if (!configuration.ok()) continue;
            ComparedConfiguration bar;
            bar.reportIndex = i;
            bar.machine = machineLabel(i);
            bar.barLabel = prefixed(i, qs(configuration.label));
            bar.configuration = configuration;
            if (baseline) bar.speedup = speedupOver(configuration, *baseline->second);
            compared.push_back(std::move(bar));
        }
    return compared;
}

std::vector<ScalingSeries> HardwareComparison::scalingSeries(ScalingAxis axis) const {
    std::vector<ScalingSeries> series;
    for (int i = 0; i < int(reports_.size()); ++i) {
        const BenchReport& report = reports_[std::size_t(i)].report;
        // One series per backend + precision + batch per rank (+ ranks, for the threads axis).
        using Key = std::tuple<std::string, std::string, int, int>;
        std::map<Key, std::vector<const BenchConfiguration*>> groups;
        for (const BenchConfiguration& configuration : report.configurations) {
            if (!configuration.ok()) continue;
            if (axis == ScalingAxis::CpuThreads && (configuration.devices != "cpu" || configuration.threads <= 0))
                continue;
            const int fixedRanks = axis == ScalingAxis::CpuThreads ? configuration.ranks : 0;
            groups[{configuration.backend, configuration.precision, configuration.batch, fixedRanks}].push_back(
                &configuration);
        }
        for (auto& [key, members] : groups) {
            auto count = [axis](const BenchConfiguration* c) { return axis == ScalingAxis::Ranks ? c->ranks : c->threads; };
            std::ranges::sort(members, {}, count);
            const auto one = std::ranges::find_if(members, [&](const BenchConfiguration* c) { return count(c) == 1; });
            if (one == members.end() || members.size() < 2 || count(members.back()) == 1) continue;
            const double single = (*one)->trainImagesPerSecond.median;
            ScalingSeries line;
            line.reportIndex = i;
            line.name = prefixed(i, tr("%1 %2, batch %3")
                                        .arg(qs(std::get<0>(key)), qs(std::get<1>(key)))
                                        .arg(std::get<2>(key)));
            for (const BenchConfiguration* member : members) {
                ScalingSeries::Point point;
                point.count = count(member);
                point.imagesPerSecond = member->trainImagesPerSecond.median;
                point.idealImagesPerSecond = single * point.count;
                if (axis == ScalingAxis::Ranks) point.efficiency = scalingEfficiency(report, *member);
                else if (single > 0) point.efficiency = point.imagesPerSecond / point.idealImagesPerSecond;
                if (!line.points.empty() && line.points.back().count == point.count) continue;  // one per count
                line.points.push_back(point);
            }
            series.push_back(std::move(line));
        }
    }
    return series;
}

QStringList HardwareComparison::tableHeaders(NumberStyle style) {
    const bool exact = style == NumberStyle::Exact;
    return {tr("machine"),         tr("configuration"),      tr("backend"),        tr("precision"),
            tr("threads"),         tr("batch per rank"),     tr("ranks"),          tr("nodes"),
            tr("status"),          tr("train images/s"),     tr("min images/s"),   tr("max images/s"),
            exact ? tr("speedup (×)") : tr("speedup"),
            exact ? tr("scaling efficiency (%)") : tr("scaling efficiency"),
            tr("inference images/s"),
            exact ? tr("peak memory (bytes)") : tr("peak memory"),
            tr("steps"),           tr("repeats"),            tr("note")};
}

QList<QStringList> HardwareComparison::tableRows(NumberStyle style) const {
    const bool exact = style == NumberStyle::Exact;
    // Exact: every digit the report holds, for spreadsheets; Display: three figures and units.
    auto value = [exact](double v) { return exact ? QString::number(v, 'g', 15) : number(v); };
    const auto baseline = findBaseline();
    QList<QStringList> rows;
    for (int i = 0; i < int(reports_.size()); ++i) {
        const BenchReport& report = reports_[std::size_t(i)].report;
        for (const BenchConfiguration& c : report.configurations) {
            const bool ok = c.ok();
            std::optional<double> speedup, efficiency;
            if (ok && baseline) speedup = speedupOver(c, *baseline->second);
            if (ok && c.ranks > 1) efficiency = scalingEfficiency(report, c);
            QString speedupText, efficiencyText, memoryText;
            if (speedup) speedupText = exact ? value(*speedup) : QString::number(*speedup, 'f', 2) + QStringLiteral("×");
            if (efficiency)
                efficiencyText = exact ? value(*efficiency * 100) : QString::number(*efficiency * 100, 'f', 1) + '%';
            if (ok) memoryText = exact ? QString::number(c.peakMemoryBytes) : formatBytes(std::int64_t(c.peakMemoryBytes));
            const QString note = ok ? (c.reduced ? qs(c.reducedReason) : QString()) : qs(c.error);
            rows << QStringList{machineLabel(i),
                                qs(c.label),
                                qs(c.backend),
                                qs(c.precision),
                                c.threads > 0 ? QString::number(c.threads) : (exact ? QStringLiteral("0") : tr("every core")),
                                QString::number(c.batch),
                                QString::number(c.ranks),
                                QString::number(c.nodes),
                                qs(toString(c.status)),
                                ok ? value(c.trainImagesPerSecond.median) : QString(),
                                ok ? value(c.trainImagesPerSecond.min) : QString(),
                                ok ? value(c.trainImagesPerSecond.max) : QString(),
                                speedupText,
                                efficiencyText,
                                ok ? value(c.inferenceImagesPerSecond) : QString(),
                                memoryText,
                                ok ? QString::number(c.steps) : QString(),
                                ok ? QString::number(c.repeats) : QString(),
                                note};
        }
    }
    return rows;
}

QString HardwareComparison::csv() const {
    QString text;
    auto appendRow = [&text](const QStringList& fields) {
        QStringList quoted;
        for (const QString& field : fields) quoted << csvField(field);
        text += quoted.join(',') + "\r\n";
    };
    appendRow(tableHeaders(NumberStyle::Exact));
    for (const QStringList& row : tableRows(NumberStyle::Exact)) appendRow(row);
    return text;
}

void HardwareComparison::exportCsv(const QString& path) const {
    writeFileAtomically(path.toStdString(), csv().toStdString());
}

}  // namespace cnnstudio::ui
