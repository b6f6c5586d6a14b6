#include "cnnstudio/ui/designer/auto_layout.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <vector>

namespace cnnstudio::ui {
namespace {

constexpr double pitchX = NodeMetrics::width + NodeMetrics::horizontalGap;
constexpr double pitchY = NodeMetrics::height + NodeMetrics::verticalGap;
// The margin the Design page's view leaves around a fitted network, in scene units per side.
constexpr double fitMargin = 30;

// The nodes by row (topological depth), each row ordered to keep edges short and mostly
// uncrossed, with each node's centre relative to the centre of its row.
struct Rows {
    std::vector<std::vector<std::size_t>> nodes;
    std::vector<double> offsetX;  // by node index
};

Rows layerRows(const NetworkSpec& spec, const std::unordered_map<std::string, std::size_t>& indexOf) {
    const std::size_t count = spec.nodes.size();
    // Kahn's algorithm, relaxing the longest-path depth as nodes come off the queue.
    std::vector<std::vector<std::size_t>> consumers(count);
    std::vector<int> pendingInputs(count, 0);
    for (std::size_t i = 0; i < count; ++i)
        for (const std::string& input : spec.nodes[i].inputs)
            if (auto it = indexOf.find(input); it != indexOf.end()) {
                consumers[it->second].push_back(i);
                ++pendingInputs[i];
            }
    std::vector<int> depth(count, 0);
    std::vector<bool> placed(count, false);
    std::deque<std::size_t> ready;
    for (std::size_t i = 0; i < count; ++i)
        if (pendingInputs[i] == 0) ready.push_back(i);
    int deepest = 0;
    while (!ready.empty()) {
        std::size_t node = ready.front();
        ready.pop_front();
        placed[node] = true;
        deepest = std::max(deepest, depth[node]);
        for (std::size_t consumer : consumers[node]) {
            depth[consumer] = std::max(depth[consumer], depth[node] + 1);
            if (--pendingInputs[consumer] == 0) ready.push_back(consumer);
        }
    }
    bool anyInCycle = false;
    for (std::size_t i = 0; i < count; ++i)
        if (!placed[i]) {
            depth[i] = deepest + 1;
            anyInCycle = true;
        }
    const int rowCount = count ? deepest + 1 + (anyInCycle ? 1 : 0) : 0;

    Rows rows;
    rows.nodes.resize(std::size_t(rowCount));
    rows.offsetX.assign(count, 0.0);
    for (std::size_t i = 0; i < count; ++i) rows.nodes[std::size_t(depth[i])].push_back(i);
    for (std::size_t row = 0; row < rows.nodes.size(); ++row) {
        std::vector<std::size_t>& nodes = rows.nodes[row];
        // Barycentre of the inputs already placed keeps edges short and mostly uncrossed.
        std::vector<double> key(count, 0.0);
        for (std::size_t node : nodes) {
            double sum = 0;
            int known = 0;
            for (const std::string& input : spec.nodes[node].inputs)
                if (auto it = indexOf.find(input); it != indexOf.end() && depth[it->second] < int(row)) {
                    sum += rows.offsetX[it->second];
                    ++known;
                }
            key[node] = known ? sum / known : 0.0;
        }
        std::stable_sort(nodes.begin(), nodes.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
        const double firstCentre = -0.5 * double(nodes.size() - 1) * pitchX;
        for (std::size_t slot = 0; slot < nodes.size(); ++slot) rows.offsetX[nodes[slot]] = firstCentre + double(slot) * pitchX;
    }
    return rows;
}

// canWrapAfter[r]: a column may end after row r. Only where rows r and r+1 hold one card each
// and the edge between them is the only one crossing: the edge that climbs to the next column
// then runs between two centred cards, through the middle of the gap between the columns.
std::vector<bool> wrapPoints(const NetworkSpec& spec, const Rows& rows,
                             const std::unordered_map<std::string, std::size_t>& indexOf) {
    const std::size_t rowCount = rows.nodes.size();
    std::vector<int> rowOf(spec.nodes.size(), 0);
    for (std::size_t row = 0; row < rowCount; ++row)
        for (std::size_t node : rows.nodes[row]) rowOf[node] = int(row);
    // crossing[r]: how many edges pass between rows r and r+1 (a difference array over the rows).
    std::vector<int> crossing(rowCount + 1, 0);
    for (std::size_t i = 0; i < spec.nodes.size(); ++i)
        for (const std::string& input : spec.nodes[i].inputs)
            if (auto it = indexOf.find(input); it != indexOf.end()) {
                const auto [top, bottom] = std::minmax(rowOf[it->second], rowOf[i]);
                ++crossing[std::size_t(top)];
                --crossing[std::size_t(bottom)];
            }
    std::vector<bool> canWrapAfter(rowCount, false);
    int running = 0;
    for (std::size_t row = 0; row + 1 < rowCount; ++row) {
        running += crossing[row];
        if (running != 1 || rows.nodes[row].size() != 1 || rows.nodes[row + 1].size() != 1) continue;
        const std::vector<std::string>& inputs = spec.nodes[rows.nodes[row + 1][0]].inputs;
        canWrapAfter[row] = std::find(inputs.begin(), inputs.end(), spec.nodes[rows.nodes[row][0]].name) != inputs.end();
    }
    return canWrapAfter;
}

// The first row of each column when columns take at most rowsPerColumn rows, or more where no
// wrap point comes sooner.
std::vector<std::size_t> columnStarts(const std::vector<bool>& canWrapAfter, std::size_t rowsPerColumn) {
    std::vector<std::size_t> starts{0};
    std::ptrdiff_t lastWrap = -1;
    for (std::size_t row = 0; row < canWrapAfter.size(); ++row) {
        if (row - starts.back() + 1 > rowsPerColumn && lastWrap >= std::ptrdiff_t(starts.back())) {
            starts.push_back(std::size_t(lastWrap) + 1);
            lastWrap = -1;
        }
        if (canWrapAfter[row]) lastWrap = std::ptrdiff_t(row);
    }
    return starts;
}

// The zoom at which a drawing of this size, fitted into the target canvas, is shown.
double zoomAtFit(double width, double height) {
    return std::min({1.0, LayoutTarget::canvasWidth / (width + 2 * fitMargin),
                     LayoutTarget::canvasHeight / (height + 2 * fitMargin)});
}

}  // namespace

std::map<std::string, std::pair<double, double>> layeredLayout(const NetworkSpec& spec) {
    std::unordered_map<std::string, std::size_t> indexOf;
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) indexOf[spec.nodes[i].name] = i;
    const Rows rows = layerRows(spec, indexOf);
    const std::size_t rowCount = rows.nodes.size();
    std::size_t widestRow = 1;
    for (const auto& row : rows.nodes) widestRow = std::max(widestRow, row.size());
    const double columnWidth = double(widestRow) * pitchX - NodeMetrics::horizontalGap;

    // Fewer columns first: one column reads most naturally, and is kept while it is readable.
    const std::vector<bool> canWrapAfter = wrapPoints(spec, rows, indexOf);
    std::vector<std::size_t> starts{0};
    double bestZoom = -1;
    for (std::size_t rowsPerColumn = rowCount; rowsPerColumn >= 1 && bestZoom < LayoutTarget::readableZoom; --rowsPerColumn) {
        std::vector<std::size_t> candidate = columnStarts(canWrapAfter, rowsPerColumn);
        std::size_t tallest = 0;
        for (std::size_t column = 0; column < candidate.size(); ++column)
            tallest = std::max(tallest, (column + 1 < candidate.size() ? candidate[column + 1] : rowCount) - candidate[column]);
        const double columns = double(candidate.size());
        const double zoom = zoomAtFit(columns * columnWidth + (columns - 1) * NodeMetrics::columnGap,
                                      double(tallest) * pitchY - NodeMetrics::verticalGap);
        if (zoom > bestZoom + 1e-9) {
            bestZoom = zoom;
            starts = std::move(candidate);
        }
    }

    std::map<std::string, std::pair<double, double>> positions;
    for (std::size_t column = 0; column < starts.size(); ++column) {
        const std::size_t end = column + 1 < starts.size() ? starts[column + 1] : rowCount;
        const double centreX = double(column) * (columnWidth + NodeMetrics::columnGap);
        for (std::size_t row = starts[column]; row < end; ++row)
            for (std::size_t node : rows.nodes[row])
                positions[spec.nodes[node].name] = {centreX + rows.offsetX[node] - NodeMetrics::width / 2,
                                                    double(row - starts[column]) * pitchY};
    }
    return positions;
}

}  // namespace cnnstudio::ui
