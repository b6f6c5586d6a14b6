// DesignArea: the Design page — layer palette on the left; in the middle the network's name over
// the canvas, with the problems list and the per-layer analysis table in tabs under it; the
// inspector on the right — all observing one DesignDocument.
#pragma once

#include <QList>
#include <QWidget>

class QLineEdit;
class QSplitter;
class QTabWidget;

namespace cnnstudio::ui {

class AnalysisPanel;
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
    AnalysisPanel* analysis() const { return analysis_; }
    QLineEdit* networkNameEditor() const { return networkName_; }

public slots:
    void showAnalysis();  // brings the Analysis tab forward, on the selected layer's row
    void showProblems();

signals:
    // For the status bar: refused edits and hints. An empty text clears a hint that is over.
    void message(const QString& text);

private:
    void commitNetworkName();
    void refreshNetworkName();
    void renameNode(const QString& node);
    void refreshProblemsTab(int count);

    DesignDocument* document_;
    DesignerCanvas* canvas_;
    DesignerView* view_;
    LayerPalette* palette_;
    InspectorPanel* inspector_;
    ProblemsPanel* problems_;
    AnalysisPanel* analysis_;
    QSplitter* centre_;  // the canvas over the problems and analysis tabs
    QTabWidget* bottomTabs_;
    QList<int> sizesBeforeAnalysis_;  // empty unless showAnalysis enlarged the table
    QLineEdit* networkName_;
    bool placingHintShown_ = false;
};

}  // namespace cnnstudio::ui
