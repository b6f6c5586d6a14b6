// The --summary table: one row per node in topological order, then the totals and problems.
//
//   node     type     output      params    FLOPs
//   input    Input    1×48×48          0        0
//   conv1    Conv2D   64×48×48       576   2.65 M
//   ...
//   Trainable parameters:        3,506,503
//   Forward FLOPs per image:     ...
#include <algorithm>
#include <cstdio>

#include "cnnstudio/shape_inference.h"

namespace cnnstudio {
namespace {

std::string withThousands(std::int64_t value) {
    std::string digits = std::to_string(value < 0 ? -value : value);
    std::string text;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
        text += digits[i];
    }
    return value < 0 ? "-" + text : text;
}

std::string fixed(double value, int decimals) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

// 512, 36.9 k, 199.1 M, 1.23 G: short enough for a column, exact enough to compare layers.
std::string shortCount(std::int64_t value) {
    if (value < 1000) return std::to_string(value);
    if (value < 1000000) return fixed(value / 1e3, 1) + " k";
    if (value < 1000000000) return fixed(value / 1e6, 2) + " M";
    return fixed(value / 1e9, 2) + " G";
}

std::string shapeText(const TensorShape& shape) {
    if (shape.channels == 0) return "?";
    return std::to_string(shape.channels) + "×" + std::to_string(shape.height) + "×" +
           std::to_string(shape.width);
}

// Characters on screen, not bytes: "×" is two bytes of UTF-8.
std::size_t displayWidth(const std::string& text) {
    std::size_t width = 0;
    for (unsigned char byte : text) width += (byte & 0xC0) != 0x80;
    return width;
}

std::string padded(const std::string& text, std::size_t width, bool alignRight) {
    std::string fill(width > displayWidth(text) ? width - displayWidth(text) : 0, ' ');
    return alignRight ? fill + text : text + fill;
}

}  // namespace

std::string formatSummaryTable(const ShapeReport& report) {
    const std::vector<std::string> header{"node", "type", "output", "params", "FLOPs"};
    const std::vector<bool> alignRight{false, false, false, true, true};
    std::vector<std::vector<std::string>> rows;
    for (const auto& node : report.nodes) {
        const bool known = node.outputShape.channels != 0;
        rows.push_back({node.problem.empty() ? node.name : node.name + " (!)", node.type,
                        shapeText(node.outputShape),
                        known ? withThousands(node.parameters) : "?",
                        known ? shortCount(node.forwardFlops) : "?"});
    }
    std::vector<std::size_t> widths;
    for (const auto& title : header) widths.push_back(displayWidth(title));
    for (const auto& row : rows)
        for (std::size_t column = 0; column < row.size(); ++column)
            widths[column] = std::max(widths[column], displayWidth(row[column]));

    auto line = [&](const std::vector<std::string>& cells) {
        std::string text;
        for (std::size_t column = 0; column < cells.size(); ++column) {
            if (column > 0) text += "  ";
            text += padded(cells[column], widths[column], alignRight[column]);
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        return text + "\n";
    };
    std::string table = line(header);
    std::size_t ruleWidth = 2 * (widths.size() - 1);
    for (std::size_t width : widths) ruleWidth += width;
    table += std::string(ruleWidth, '-') + "\n";
    for (const auto& row : rows) table += line(row);
    table += std::string(ruleWidth, '-') + "\n";

    table += "Input:                        " + shapeText(report.inputShape) + "\n";
    table += "Output:                       " + shapeText(report.outputShape) +
             (report.outputNode.empty() ? "" : " (node '" + report.outputNode + "')") + "\n";
    table += "Trainable parameters:         " + withThousands(report.totalParameters) + "\n";
    table += "Forward FLOPs per image:      " + fixed(report.totalForwardFlops / 1e6, 2) + " MFLOPs\n";
    const std::int64_t tenthsOfKib = (report.activationBytesPerImage * 10 + 512) / 1024;
    table += "Activation memory per image:  " + withThousands(tenthsOfKib / 10) + "." +
             std::to_string(tenthsOfKib % 10) +
             " KiB (float32, every node's output)\n";
    if (!report.problems.empty()) {
        table += "\nProblems (" + std::to_string(report.problems.size()) + "):\n";
        for (const auto& [node, message] : report.problems)
            table += "  " + (node.empty() ? std::string("network") : "node '" + node + "'") + ": " +
                     message + "\n";
    }
    return table;
}

}  // namespace cnnstudio
