#include "cnnstudio/ui/designer/auto_layout.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <vector>

namespace cnnstudio::ui {

std::map<std::string, std::pair<double, double>> layeredLayout(const NetworkSpec& spec) {
    const std::size_t count = spec.nodes.size();
    std::unordered_map<std::string, std::size_t> indexOf;
    for (std::size_t i = 0; i < count; ++i) indexOf[spec.nodes[i].name] = i;

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
    const int layerCount = deepest + 1 + (anyInCycle ? 1 : 0);

    std::vector<std::vector<std::size_t>> layers(std::size_t(std::max(layerCount, 0)));
    for (std::size_t i = 0; i < count; ++i) layers[std::size_t(depth[i])].push_back(i);

    std::map<std::string, std::pair<double, double>> positions;
    std::vector<double> centreX(count, 0.0);
    const double pitchX = NodeMetrics::width + NodeMetrics::horizontalGap;
    const double pitchY = NodeMetrics::height + NodeMetrics::verticalGap;
    for (std::size_t layer = 0; layer < layers.size(); ++layer) {
        std::vector<std::size_t>& nodes = layers[layer];
        // Barycentre of the inputs already placed keeps edges short and mostly uncrossed.
        std::vector<double> key(count, 0.0);
        for (std::size_t node : nodes) {
            double sum = 0;
            int known = 0;
            for (const std::string& input : spec.nodes[node].inputs)
                if (auto it = indexOf.find(input); it != indexOf.end() && depth[it->second] < int(layer)) {
                    sum += centreX[it->second];
                    ++known;
                }
            key[node] = known ? sum / known : 0.0;
        }
        std::stable_sort(nodes.begin(), nodes.end(),
                         [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
        const double firstCentre = -0.5 * double(nodes.size() - 1) * pitchX;
        for (std::size_t slot = 0; slot < nodes.size(); ++slot) {
            const std::size_t node = nodes[slot];
            centreX[node] = firstCentre + double(slot) * pitchX;
            positions[spec.nodes[node].name] = {centreX[node] - NodeMetrics::width / 2,
                                                double(layer) * pitchY};
        }
    }
    return positions;
}

}  // namespace cnnstudio::ui
