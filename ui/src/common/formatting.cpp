#include "cnnstudio/ui/common/formatting.h"

#include <cmath>

namespace cnnstudio::ui {
namespace {

QString scaled(double value, const char* const* units, int unitCount, double step) {
    int unit = 0;
    while (std::abs(value) >= step && unit + 1 < unitCount) {
        value /= step;
        ++unit;
    }
    const int decimals = unit == 0 ? 0 : std::abs(value) < 10 ? 2 : std::abs(value) < 100 ? 1 : 0;
    return QString::number(value, 'f', decimals) + units[unit];
}

}  // namespace

QString formatCount(std::int64_t count) {
    static const char* const units[] = {"", " k", " M", " G", " T"};
    return scaled(double(count), units, 5, 1000.0);
}

QString formatFlops(std::int64_t flops) {
    static const char* const units[] = {" FLOPs", " kFLOPs", " MFLOPs", " GFLOPs", " TFLOPs"};
    return scaled(double(flops), units, 5, 1000.0);
}

QString formatBytes(std::int64_t bytes) {
    static const char* const units[] = {" B", " KiB", " MiB", " GiB", " TiB"};
    return scaled(double(bytes), units, 5, 1024.0);
}

QString formatShape(const TensorShape& shape) {
    if (shape.height == 1 && shape.width == 1) return QString::number(shape.channels);
    return QStringLiteral("%1×%2×%3").arg(shape.channels).arg(shape.height).arg(shape.width);
}

QString formatDuration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("—");
    const auto total = static_cast<long long>(std::llround(seconds));
    const long long hours = total / 3600, minutes = (total % 3600) / 60, secs = total % 60;
    if (hours > 0) return QStringLiteral("%1 h %2 min").arg(hours).arg(minutes, 2, 10, QLatin1Char('0'));
    if (minutes > 0) return QStringLiteral("%1 min %2 s").arg(minutes).arg(secs, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 s").arg(secs);
}

QString countOf(std::int64_t count, const QString& singular, const QString& plural) {
    return QString::number(count) + ' ' + (count == 1 ? singular : plural);
}

QString breakableAfterCommas(const QString& text) {
    QString breakable = text;
    return breakable.replace(QLatin1Char(','), QStringLiteral(",\u200B"));
}

}  // namespace cnnstudio::ui
