#include "common/layer_colors.h"

#include <iterator>

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

QColor seriesColor(int index, const QPalette& palette) {
    // Tableau 10: blue, orange, green, red, purple, brown, pink, grey, olive, cyan.
    static const QColor hues[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},
                                  {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                                  {188, 189, 34},  {23, 190, 207}};
    constexpr int hueCount = int(std::size(hues));
    const QColor base = hues[index % hueCount];
    const int round = index / hueCount;
    const bool dark = isDarkPalette(palette);
    // On a dark background every hue is lifted so that it stays readable.
    QColor color = dark ? base.lighter(130) : base;
    if (round > 0) color = (round % 2 == 1) == dark ? color.darker(100 + 35 * round) : color.lighter(100 + 35 * round);
    return color;
}

}  // namespace cnnstudio::ui
