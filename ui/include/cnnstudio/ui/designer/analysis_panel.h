// AnalysisPanel: the Design page's Analysis tab — the AnalysisTableModel's per-layer table
// (click a header to sort, double-click a row to select that layer on the canvas) over the
// network's totals.
#pragma once

#include <QWidget>

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace cnnstudio::ui {

class AnalysisTableModel;
class DesignDocument;

class AnalysisPanel : public QWidget {
    Q_OBJECT

public:
    explicit AnalysisPanel(DesignDocument* document, QWidget* parent = nullptr);

    AnalysisTableModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    QString totalsText() const;

public slots:
    void showLayer(const QString& layer);  // scrolls to its row and selects it

signals:
    void nodeActivated(const QString& node);

private:
    void refreshTotals();

    DesignDocument* document_;
    AnalysisTableModel* model_;
    QSortFilterProxyModel* sorted_;
    QTableView* table_;
    QLabel* totals_;
};

}  // namespace cnnstudio::ui
