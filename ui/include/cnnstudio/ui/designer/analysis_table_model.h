// AnalysisTableModel: the network's analysis as a table, one row per layer in the order data
// flows — output shape, trainable parameters, forward FLOPs and activation memory per image, and
// what is wrong with the layer — from the engine's shape inference (DesignDocument::report()).
// Refreshed after every edit. The Analysis tab of the Design page shows it.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

namespace cnnstudio::ui {

class DesignDocument;

class AnalysisTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Layer, Type, OutputShape, Parameters, Flops, ActivationMemory, Problems, ColumnCount };
    // Sorting by a number column sorts by this role's value rather than by its formatted text.
    static constexpr int sortRole = Qt::UserRole + 1;

    explicit AnalysisTableModel(DesignDocument* document, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    QString layerAt(int row) const;
    int rowOf(const QString& layer) const;  // -1 when not listed

private:
    void refresh();
    QStringList problemsOf(int row) const;

    DesignDocument* document_;
};

}  // namespace cnnstudio::ui
