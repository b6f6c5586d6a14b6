#include "cnnstudio/ui/live/live_frame_view.h"

#include <QPainter>

namespace cnnstudio::ui {

LiveFrameView::LiveFrameView(QWidget* parent) : QWidget(parent) {
    setMinimumSize(320, 240);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void LiveFrameView::showFrame(const QImage& frame) {
    frame_ = frame;
    message_.clear();
    update();
}

void LiveFrameView::showMessage(const QString& text) {
    message_ = text;
    // The message replaces the frame: a stale frame behind an error reads as if it still ran.
    frame_ = QImage();
    update();
}

void LiveFrameView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Window).darker(115));
    if (!frame_.isNull()) {
        const QSize fitted = frame_.size().scaled(size(), Qt::KeepAspectRatio);
        const QRect target(QPoint((width() - fitted.width()) / 2, (height() - fitted.height()) / 2), fitted);
        painter.setRenderHint(QPainter::SmoothPixmapTransform);
        painter.drawImage(target, frame_);
    }
    if (!message_.isEmpty()) {
        const QRect band = rect().adjusted(width() / 8, height() / 2 - 40, -width() / 8, -(height() / 2 - 40));
        painter.fillRect(band, QColor(0, 0, 0, 170));
        painter.setPen(Qt::white);
        painter.drawText(band.adjusted(12, 6, -12, -6), Qt::AlignCenter | Qt::TextWordWrap, message_);
    }
}

}  // namespace cnnstudio::ui
