#include "common/layer_colors.h"

#include <QHash>

namespace cnnstudio::ui {

QColor layerCategoryColor(const QString& category) {
    static const QHash<QString, int> hues = {
        {"Input", 170},        {"Convolution", 210}, {"Pooling", 265}, {"Normalisation", 30},
        {"Activation", 120},   {"Regularisation", 90}, {"Structure", 50},    {"Dense", 320},
    };
    auto it = hues.find(category);
    if (it == hues.end()) return QColor::fromHsv(0, 0, 150);
    return QColor::fromHsv(it.value(), 150, 215);
}

QColor problemColor(const QPalette& palette) {
    return isDarkPalette(palette) ? QColor(255, 110, 100) : QColor(200, 30, 30);
}

QColor blend(const QColor& from, const QColor& to, double amount) {
    auto mix = [amount](double a, double b) { return a + (b - a) * amount; };
    return QColor::fromRgbF(float(mix(from.redF(), to.redF())), float(mix(from.greenF(), to.greenF())),
                            float(mix(from.blueF(), to.blueF())));
}

bool isDarkPalette(const QPalette& palette) {
    return palette.color(QPalette::Window).lightnessF() < 0.5;
}

}  // namespace cnnstudio::ui
