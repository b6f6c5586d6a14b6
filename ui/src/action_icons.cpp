#include "action_icons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

constexpr int side = 32;

QPixmap draw(ActionIcon icon, const QPalette& palette, QPalette::ColorGroup group) {
    QPixmap pixmap(side, side);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    const bool enabled = group != QPalette::Disabled;
    QColor ink = palette.color(group, QPalette::ButtonText);
    auto accent = [&](QColor color) {
        if (!enabled) return ink;
        return isDarkPalette(palette) ? color.lighter(130) : color;
    };
    switch (icon) {
    case ActionIcon::Train: {
        QPainterPath triangle;
        triangle.moveTo(9, 6);
        triangle.lineTo(26, 16);
        triangle.lineTo(9, 26);
        triangle.closeSubpath();
        painter.fillPath(triangle, accent(QColor(40, 150, 70)));
        break;
    }
    case ActionIcon::Stop:
        painter.setPen(Qt::NoPen);
        painter.setBrush(accent(QColor(200, 50, 45)));
        painter.drawRoundedRect(QRectF(8, 8, 16, 16), 2.5, 2.5);
        break;
    case ActionIcon::AutoLayout: {
        painter.setPen(QPen(ink, 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRoundedRect(QRectF(10, 3, 12, 6), 1.5, 1.5);
        painter.drawRoundedRect(QRectF(3, 23, 11, 6), 1.5, 1.5);
        painter.drawRoundedRect(QRectF(18, 23, 11, 6), 1.5, 1.5);
        painter.drawLine(QPointF(16, 9), QPointF(16, 15));
        painter.drawLine(QPointF(8.5, 15), QPointF(23.5, 15));
        painter.drawLine(QPointF(8.5, 15), QPointF(8.5, 23));
        painter.drawLine(QPointF(23.5, 15), QPointF(23.5, 23));
        break;
    }
    case ActionIcon::FitNetwork: {
        painter.setPen(QPen(ink, 2.2, Qt::SolidLine, Qt::RoundCap));
        const double a = 4, b = 28, c = 11;
        for (const QPointF& corner : {QPointF(a, a), QPointF(b, a), QPointF(a, b), QPointF(b, b)}) {
            const double dx = corner.x() < 16 ? 1 : -1, dy = corner.y() < 16 ? 1 : -1;
            painter.drawLine(corner, corner + QPointF(dx * (c - a), 0));
            painter.drawLine(corner, corner + QPointF(0, dy * (c - a)));
        }
        painter.setPen(Qt::NoPen);
        painter.setBrush(accent(QColor(40, 110, 200)));
        painter.drawRoundedRect(QRectF(11, 11, 10, 10), 2, 2);
        break;
    }
    }
    return pixmap;
}

}  // namespace

QIcon paintedIcon(ActionIcon icon, const QPalette& palette) {
    QIcon result;
    result.addPixmap(draw(icon, palette, QPalette::Active), QIcon::Normal);
    result.addPixmap(draw(icon, palette, QPalette::Disabled), QIcon::Disabled);
    return result;
}

}  // namespace cnnstudio::ui
