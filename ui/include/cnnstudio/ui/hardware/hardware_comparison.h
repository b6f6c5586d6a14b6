// HardwareComparison: the Hardware page's model, no widgets. It holds the benchmark reports on
// show (a sweep just run here, reports opened from files, reports of other machines overlaid)
// and derives what the charts and the table draw: one bar per measured configuration with its
// speedup over the chosen baseline, the scaling series (images/s against GPUs and nodes, and
// against CPU threads) with their ideal lines and efficiencies, and where a step's time goes.
// Reports are read and written only through the engine's report library
// (cnnstudio/bench_report.h); the numbers are the report's, never recomputed from anything else.
#pragma once

#include <optional>
#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>

#include "cnnstudio/bench_report.h"

namespace cnnstudio::ui {

struct ShownReport {
    BenchReport report;
    QString source;  // the file it came from; empty for a sweep not saved yet
};

// What the speedups are taken over: cpu-ref on one thread (the naive baseline, the default), the
// fastest CPU configuration, or any configuration the user picks.
struct BaselineChoice {
    enum class Kind { CpuRefOneThread, BestCpu, Configuration };
    Kind kind = Kind::CpuRefOneThread;
    int reportIndex = 0;    // Configuration: which report
    QString label;          // Configuration: its label in that report
    bool operator==(const BaselineChoice&) const = default;
};

// One successful configuration of one report: a bar of the speedup chart.
struct ComparedConfiguration {
    int reportIndex = 0;
    QString machine;   // the report's machine label
    QString barLabel;  // the configuration's label, prefixed by the machine when reports are overlaid
    BenchConfiguration configuration;
    std::optional<double> speedup;  // over the baseline; none without one
};

// Images/s against ranks (or CPU threads) for one backend + precision + batch of one report.
struct ScalingSeries {
    QString name;  // "cudnn bf16, batch 256" (with the machine when reports are overlaid)
    int reportIndex = 0;
    struct Point {
        int count = 1;  // ranks, or CPU threads
        double imagesPerSecond = 0;
        double idealImagesPerSecond = 0;  // count x images/s at one rank (one thread)
        std::optional<double> efficiency;  // measured / ideal
    };
    std::vector<Point> points;  // by count, ascending; the first has count 1
};

enum class ScalingAxis { Ranks, CpuThreads };

class HardwareComparison : public QObject {
    Q_OBJECT

public:
    explicit HardwareComparison(QObject* parent = nullptr);

    const std::vector<ShownReport>& reports() const { return reports_; }
    bool isEmpty() const { return reports_.empty(); }

    // Shows only this report (replacing the others) / adds it beside the others.
    void showReport(BenchReport report, const QString& source = {});
    void overlayReport(BenchReport report, const QString& source = {});
    // Reads a report file through the engine's library; throws Error naming the file and field.
    // Overlaying a file already on show throws Error too: its bars and rows would all be doubled.
    void openReportFile(const QString& path);
    void overlayReportFile(const QString& path);
    void removeReport(int reportIndex);
    void clear();
    // Writes report `reportIndex` atomically to `path` and remembers it as its source.
    void saveReport(int reportIndex, const QString& path);
    // A report's machine label, as the legends and bar labels show it (the hostname until set).
    QString machineLabel(int reportIndex) const;
    void setMachineLabel(int reportIndex, const QString& label);

    BaselineChoice baseline() const { return baseline_; }
    void setBaseline(const BaselineChoice& baseline);
    // The configuration the speedups are over, or none when the reports have no such one.
    std::optional<ComparedConfiguration> baselineConfiguration() const;
    // "cpu-ref fp32, 1 thread (laptop)", or why there is none.
    QString baselineName() const;

    std::vector<ComparedConfiguration> comparedConfigurations() const;
    std::vector<ScalingSeries> scalingSeries(ScalingAxis axis) const;

    // The table of numbers: every configuration of every report, failed and cancelled included.
    // Display rounds to three figures with units; Exact keeps every digit, units in the headers.
    enum class NumberStyle { Display, Exact };
    static QStringList tableHeaders(NumberStyle style = NumberStyle::Display);
    QList<QStringList> tableRows(NumberStyle style = NumberStyle::Display) const;
    QString csv() const;  // Exact headers and rows, RFC 4180 quoting
    void exportCsv(const QString& path) const;  // atomically; throws Error naming the file

signals:
    void changed();  // reports, labels or the baseline changed: everything is derived again

private:
    bool overlaid() const { return reports_.size() > 1; }
    QString prefixed(int reportIndex, const QString& text) const;
    std::optional<std::pair<int, const BenchConfiguration*>> findBaseline() const;

    std::vector<ShownReport> reports_;
    BaselineChoice baseline_;
};

// The label and unit of a count on the scaling chart's x axis.
QString scalingAxisTitle(ScalingAxis axis);

}  // namespace cnnstudio::ui
