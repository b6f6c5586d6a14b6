#include "cnnstudio/ui/designer/design_area.h"

#include <QShortcut>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "cnnstudio/ui/designer/designer_view.h"
#include "cnnstudio/ui/designer/inspector_panel.h"
#include "cnnstudio/ui/designer/layer_palette.h"
#include "cnnstudio/ui/designer/problems_panel.h"

namespace cnnstudio::ui {

DesignArea::DesignArea(DesignDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    canvas_ = new DesignerCanvas(document_, this);
    view_ = new DesignerView(canvas_, this);
    view_->setObjectName("designerView");
    palette_ = new LayerPalette(this);
    palette_->setObjectName("layerPalette");
    inspector_ = new InspectorPanel(document_, this);
    inspector_->setObjectName("inspector");
    problems_ = new ProblemsPanel(document_, this);
    problems_->setObjectName("problems");

    auto* centre = new QSplitter(Qt::Vertical, this);
    centre->addWidget(view_);
    centre->addWidget(problems_);
    centre->setStretchFactor(0, 5);
    centre->setStretchFactor(1, 1);
    centre->setSizes({800, 110});
    auto* columns = new QSplitter(Qt::Horizontal, this);
    columns->addWidget(palette_);
    columns->addWidget(centre);
    columns->addWidget(inspector_);
    columns->setStretchFactor(0, 0);
    columns->setStretchFactor(1, 1);
    columns->setStretchFactor(2, 0);
    columns->setSizes({180, 900, 340});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(columns);

    connect(palette_, &LayerPalette::layerActivated, this, [this](const QString& type) {
        canvas_->addNodeAt(type, view_->mapToScene(view_->viewport()->rect().center()));
    });
    connect(palette_, &LayerPalette::layerChosen, this, [this](const QString& type) {
        canvas_->startInserting(type);
        emit message(tr("Click on the canvas to place a %1 (Esc cancels)").arg(type));
    });
    connect(palette_, &LayerPalette::layerActivated, canvas_, &DesignerCanvas::cancelMode);
    // Escape leaves a canvas mode wherever the focus is on this page (the palette, after a pick).
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this, canvas_, &DesignerCanvas::cancelMode);
    escape->setContext(Qt::WidgetWithChildrenShortcut);
    connect(canvas_, &DesignerCanvas::selectedNodeChanged, inspector_, &InspectorPanel::setNode);
    connect(problems_, &ProblemsPanel::nodeActivated, canvas_, &DesignerCanvas::selectNode);
    connect(canvas_, &DesignerCanvas::editRefused, this, &DesignArea::message);
    connect(inspector_, &InspectorPanel::editRefused, this, &DesignArea::message);
    // A new or opened network is shown whole, once the view has its final size.
    connect(document_, &DesignDocument::documentReset, this, [this] {
        QTimer::singleShot(0, view_, &DesignerView::fitToContents);
    });
}

}  // namespace cnnstudio::ui
