#include "cnnstudio/ui/designer/analysis_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/designer/analysis_table_model.h"
#include "cnnstudio/ui/designer/design_document.h"

namespace cnnstudio::ui {

AnalysisPanel::AnalysisPanel(DesignDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), model_(new AnalysisTableModel(document, this)) {
    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(model_);
    sorted_->setSortRole(AnalysisTableModel::sortRole);
    table_ = new QTableView(this);
    table_->setObjectName("analysisTable");
    table_->setModel(sorted_);
    table_->setSortingEnabled(true);
    // Unsorted until the user picks a column: the rows then follow the data through the network.
    table_->sortByColumn(-1, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    totals_ = new QLabel(this);
    totals_->setObjectName("analysisTotals");
    totals_->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(totals_);
    layout->addWidget(table_);

    connect(table_, &QTableView::activated, this, [this](const QModelIndex& index) {
        emit nodeActivated(model_->layerAt(sorted_->mapToSource(index).row()));
    });
    connect(document_, &DesignDocument::analysisChanged, this, &AnalysisPanel::refreshTotals);
    connect(document_, &DesignDocument::documentReset, this, &AnalysisPanel::refreshTotals);
    refreshTotals();
}

QString AnalysisPanel::totalsText() const { return totals_->text(); }

void AnalysisPanel::refreshTotals() {
    const ShapeReport& report = document_->report();
    QString text = tr("%n layer(s): %1 parameters, %2 and %3 of activations per image", nullptr,
                      int(report.nodes.size()))
                       .arg(formatCount(report.totalParameters), formatFlops(report.totalForwardFlops),
                            formatBytes(report.activationBytesPerImage));
    if (!report.ok()) text += tr("; %n problem(s)", nullptr, int(report.problems.size()));
    totals_->setText(text);
}

void AnalysisPanel::showLayer(const QString& layer) {
    const int row = model_->rowOf(layer);
    if (row < 0) return;
    const QModelIndex index = sorted_->mapFromSource(model_->index(row, 0));
    table_->selectRow(index.row());
    table_->scrollTo(index);
}

}  // namespace cnnstudio::ui
