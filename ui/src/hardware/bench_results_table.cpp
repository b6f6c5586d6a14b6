#include "cnnstudio/ui/hardware/bench_results_table.h"

#include <QHeaderView>

#include "cnnstudio/ui/hardware/hardware_comparison.h"
#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

// The columns holding numbers, right-aligned so that their digits line up.
bool isNumberColumn(int column) { return (column >= 4 && column <= 7) || (column >= 9 && column <= 17); }
constexpr int statusColumn = 8, noteColumn = 18;

}  // namespace

BenchResultsTable::BenchResultsTable(const HardwareComparison* comparison, QWidget* parent)
    : QTableWidget(parent), comparison_(comparison) {
    setObjectName("benchResults");
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAlternatingRowColors(true);
    setSortingEnabled(false);
    setWordWrap(false);
    verticalHeader()->setVisible(false);
    horizontalHeader()->setStretchLastSection(true);
    refresh();
}

void BenchResultsTable::refresh() {
    const QStringList headers = HardwareComparison::tableHeaders();
    const QList<QStringList> rows = comparison_->tableRows();
    clear();
    setColumnCount(int(headers.size()));
    setHorizontalHeaderLabels(headers);
    setRowCount(int(rows.size()));
    for (int row = 0; row < rows.size(); ++row)
        for (int column = 0; column < rows[row].size(); ++column) {
            auto* item = new QTableWidgetItem(rows[row][column]);
            if (isNumberColumn(column)) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (column == noteColumn) item->setToolTip(rows[row][column]);
            if (column == statusColumn && rows[row][column] != QLatin1String("ok"))
                item->setForeground(problemColor(palette()));
            setItem(row, column, item);
        }
    resizeColumnsToContents();
}

}  // namespace cnnstudio::ui
