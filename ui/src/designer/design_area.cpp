#include "cnnstudio/ui/designer/design_area.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/designer/analysis_panel.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "cnnstudio/ui/designer/designer_view.h"
#include "cnnstudio/ui/designer/inspector_panel.h"
#include "cnnstudio/ui/designer/layer_palette.h"
#include "cnnstudio/ui/designer/node_item.h"
#include "cnnstudio/ui/designer/problems_panel.h"
#include "designer/document_undo_keys.h"

namespace cnnstudio::ui {
namespace {

// The part of the page's height the analysis table takes when asked for.
constexpr double analysisShare = 0.45;

}  // namespace

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
    analysis_ = new AnalysisPanel(document_, this);
    analysis_->setObjectName("analysis");
    bottomTabs_ = new QTabWidget(this);
    bottomTabs_->setObjectName("designBottomTabs");
    bottomTabs_->setDocumentMode(true);
    bottomTabs_->addTab(problems_, tr("Problems"));
    bottomTabs_->addTab(analysis_, tr("Analysis"));

    networkName_ = new QLineEdit(this);
    networkName_->setObjectName("networkName");
    networkName_->setToolTip(tr("The network's name: its runs and exported files are named after it"));
    giveUndoKeysToTheDocument(networkName_);
    auto* nameLabel = new QLabel(tr("&Network:"), this);
    nameLabel->setBuddy(networkName_);
    auto* nameRow = new QHBoxLayout;
    nameRow->setContentsMargins(4, 2, 4, 2);
    nameRow->addWidget(nameLabel);
    nameRow->addWidget(networkName_, 1);
    auto* canvasColumn = new QWidget(this);
    auto* canvasLayout = new QVBoxLayout(canvasColumn);
    canvasLayout->setContentsMargins(0, 0, 0, 0);
    canvasLayout->setSpacing(0);
    canvasLayout->addLayout(nameRow);
    canvasLayout->addWidget(view_, 1);

    centre_ = new QSplitter(Qt::Vertical, this);
    centre_->addWidget(canvasColumn);
    centre_->addWidget(bottomTabs_);
    centre_->setStretchFactor(0, 5);
    centre_->setStretchFactor(1, 1);
    centre_->setSizes({800, 150});
    auto* columns = new QSplitter(Qt::Horizontal, this);
    columns->addWidget(palette_);
    columns->addWidget(centre_);
    columns->addWidget(inspector_);
    columns->setStretchFactor(0, 0);
    columns->setStretchFactor(1, 1);
    columns->setStretchFactor(2, 0);
    columns->setSizes({180, 900, 340});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(columns);

    connect(palette_, &LayerPalette::layerActivated, canvas_, &DesignerCanvas::cancelMode);
    connect(palette_, &LayerPalette::layerActivated, canvas_, &DesignerCanvas::addNodeBelowSelection);
    connect(palette_, &LayerPalette::layerChosen, this, [this](const QString& type) {
        canvas_->startInserting(type);
        placingHintShown_ = true;
        emit message(tr("Click on the canvas to place a %1 (Esc cancels)").arg(type));
    });
    // The hint is over once the layer is placed or the placing cancelled.
    connect(canvas_, &DesignerCanvas::modeChanged, this, [this](DesignerCanvas::Mode mode) {
        if (mode == DesignerCanvas::Mode::InsertNode || !placingHintShown_) return;
        placingHintShown_ = false;
        emit message(QString());
    });
    // Escape leaves a canvas mode wherever the focus is on this page (the palette, after a pick).
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this, canvas_, &DesignerCanvas::cancelMode);
    escape->setContext(Qt::WidgetWithChildrenShortcut);
    connect(canvas_, &DesignerCanvas::selectedNodeChanged, inspector_, &InspectorPanel::setNode);
    connect(canvas_, &DesignerCanvas::selectedNodeChanged, analysis_, &AnalysisPanel::showLayer);
    connect(canvas_, &DesignerCanvas::renameRequested, this, &DesignArea::renameNode);
    connect(canvas_, &DesignerCanvas::fitRequested, view_, &DesignerView::fitToContents);
    connect(view_, &DesignerView::zoomChanged, canvas_, [this](double zoom) {
        canvas_->setOverview(zoom < NodeItem::overviewBelowScale && canvas_->overviewLabelsFitAt(zoom));
    });
    connect(problems_, &ProblemsPanel::nodeActivated, canvas_, &DesignerCanvas::selectNode);
    connect(analysis_, &AnalysisPanel::nodeActivated, canvas_, &DesignerCanvas::selectNode);
    connect(problems_, &ProblemsPanel::problemCountChanged, this, &DesignArea::refreshProblemsTab);
    connect(canvas_, &DesignerCanvas::editRefused, this, &DesignArea::message);
    connect(inspector_, &InspectorPanel::editRefused, this, &DesignArea::message);
    connect(networkName_, &QLineEdit::editingFinished, this, &DesignArea::commitNetworkName);
    connect(document_, &DesignDocument::networkNameChanged, this, &DesignArea::refreshNetworkName);
    connect(document_, &DesignDocument::documentReset, this, &DesignArea::refreshNetworkName);
    // A new or opened network is shown whole, once the view has its final size.
    connect(document_, &DesignDocument::documentReset, this, [this] {
        QTimer::singleShot(0, view_, &DesignerView::fitToContents);
    });
    refreshNetworkName();
    refreshProblemsTab(problems_->problemCount());
}

void DesignArea::refreshProblemsTab(int count) {
    bottomTabs_->setTabText(bottomTabs_->indexOf(problems_), count ? tr("Problems (%1)").arg(count) : tr("Problems"));
}

void DesignArea::showAnalysis() {
    bottomTabs_->setCurrentWidget(analysis_);
    // A table of every layer needs more than the few lines the problems list gets.
    const QList<int> sizes = centre_->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    if (sizes.value(1) < total * analysisShare) {
        sizesBeforeAnalysis_ = sizes;
        const int table = int(total * analysisShare);
        centre_->setSizes({total - table, table});
    }
    analysis_->showLayer(canvas_->selectedNode());
}

void DesignArea::showProblems() {
    bottomTabs_->setCurrentWidget(problems_);
    // Back to the room the canvas had before the analysis table took it.
    if (!sizesBeforeAnalysis_.isEmpty()) centre_->setSizes(sizesBeforeAnalysis_);
    sizesBeforeAnalysis_.clear();
}

void DesignArea::commitNetworkName() {
    try {
        document_->setNetworkName(networkName_->text());
    } catch (const Error& error) {
        emit message(QString::fromStdString(error.what()));
        refreshNetworkName();
    }
}

void DesignArea::refreshNetworkName() {
    const QString name = QString::fromStdString(document_->spec().name);
    if (networkName_->text() != name) networkName_->setText(name);
}

void DesignArea::renameNode(const QString& node) {
    canvas_->selectNode(node);
    inspector_->nameEditor()->setFocus(Qt::OtherFocusReason);
    inspector_->nameEditor()->selectAll();
}

}  // namespace cnnstudio::ui
