// DesignArea: the Design page — layer palette on the left, the canvas in the middle with the
// problems list under it, the inspector on the right — all observing one DesignDocument.
#pragma once

#include <QWidget>

namespace cnnstudio::ui {

class DesignDocument;
class DesignerCanvas;
class DesignerView;
class InspectorPanel;
class LayerPalette;
class ProblemsPanel;

class DesignArea : public QWidget {
    Q_OBJECT

public:
    explicit DesignArea(DesignDocument* document, QWidget* parent = nullptr);

    DesignDocument* document() const { return document_; }
    DesignerCanvas* canvas() const { return canvas_; }
    DesignerView* view() const { return view_; }
    LayerPalette* palette() const { return palette_; }
    InspectorPanel* inspector() const { return inspector_; }
    ProblemsPanel* problems() const { return problems_; }

signals:
    void message(const QString& text);  // for the status bar: refused edits and the like

private:
    DesignDocument* document_;
    DesignerCanvas* canvas_;
    DesignerView* view_;
    LayerPalette* palette_;
    InspectorPanel* inspector_;
    ProblemsPanel* problems_;
};

}  // namespace cnnstudio::ui
