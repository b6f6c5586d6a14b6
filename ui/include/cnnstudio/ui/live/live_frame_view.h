// The Live demo's picture: the latest annotated frame, scaled to fit with its aspect kept, or a
// message in its place (no camera, nothing started yet, a camera lost).
#pragma once

#include <QImage>
#include <QString>
#include <QWidget>

namespace cnnstudio::ui {

class LiveFrameView : public QWidget {
    Q_OBJECT
public:
    explicit LiveFrameView(QWidget* parent = nullptr);
    void showFrame(const QImage& frame);
    void showMessage(const QString& text);  // shown instead of the frame until the next one
    const QImage& frame() const { return frame_; }
    const QString& messageText() const { return message_; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QImage frame_;
    QString message_;
};

}  // namespace cnnstudio::ui
