// DesignerView: the window onto the DesignerCanvas. Ctrl+wheel zooms around the mouse, the
// middle button (or Space + left button) pans, the left button on empty canvas draws a
// selection rectangle. A network fitted to the view is fitted again when the view changes size,
// until the user zooms or pans.
#pragma once

#include <QGraphicsView>

namespace cnnstudio::ui {

class DesignerView : public QGraphicsView {
    Q_OBJECT

public:
    explicit DesignerView(QGraphicsScene* scene, QWidget* parent = nullptr);

    double zoom() const { return transform().m11(); }
    bool isFitted() const { return fitted_; }

public slots:
    void zoomIn();
    void zoomOut();
    void resetZoom();
    void fitToContents();

signals:
    void zoomChanged(double zoom);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void keyReleaseEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void zoomBy(double factor);
    bool fitted_ = false;  // fitToContents() last set the view, not the user's zoom or pan
    bool panning_ = false;
    bool spaceHeld_ = false;
    QPoint lastPanPoint_;
};

}  // namespace cnnstudio::ui
