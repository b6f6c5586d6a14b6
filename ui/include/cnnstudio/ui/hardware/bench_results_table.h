// BenchResultsTable: the numbers behind the charts, one row per configuration of every report on
// show, failed and cancelled ones included with their reason (HardwareComparison::tableRows).
#pragma once

#include <QTableWidget>

namespace cnnstudio::ui {

class HardwareComparison;

class BenchResultsTable : public QTableWidget {
    Q_OBJECT

public:
    explicit BenchResultsTable(const HardwareComparison* comparison, QWidget* parent = nullptr);

    void refresh();  // reads the comparison again

private:
    const HardwareComparison* comparison_;
};

}  // namespace cnnstudio::ui
