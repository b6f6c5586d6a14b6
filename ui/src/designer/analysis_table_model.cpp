#include "cnnstudio/ui/designer/analysis_table_model.h"

#include <QBrush>
#include <QGuiApplication>
#include <QPalette>

#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

// Activations are stored as float32, as ShapeReport::activationBytesPerImage counts them.
constexpr std::int64_t bytesPerActivation = 4;

bool hasShape(const NodeInfo& node) { return node.outputShape.countPerImage() > 0; }

}  // namespace

AnalysisTableModel::AnalysisTableModel(DesignDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
    connect(document_, &DesignDocument::analysisChanged, this, &AnalysisTableModel::refresh);
    connect(document_, &DesignDocument::documentReset, this, &AnalysisTableModel::refresh);
}

void AnalysisTableModel::refresh() {
    // The report is replaced wholesale after each edit; so is the table.
    beginResetModel();
    endResetModel();
}

int AnalysisTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(document_->report().nodes.size());
}

int AnalysisTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString AnalysisTableModel::layerAt(int row) const {
    const auto& nodes = document_->report().nodes;
    return row >= 0 && row < int(nodes.size()) ? QString::fromStdString(nodes[std::size_t(row)].name) : QString();
}

int AnalysisTableModel::rowOf(const QString& layer) const {
    const auto& nodes = document_->report().nodes;
    for (std::size_t row = 0; row < nodes.size(); ++row)
        if (nodes[row].name == layer.toStdString()) return int(row);
    return -1;
}

QStringList AnalysisTableModel::problemsOf(int row) const {
    const NodeInfo& node = document_->report().nodes[std::size_t(row)];
    QStringList problems;
    for (const auto& [name, message] : document_->report().problems)
        if (name == node.name) problems << QString::fromStdString(message);
    if (problems.isEmpty() && !node.problem.empty()) problems << QString::fromStdString(node.problem);
    if (problems.isEmpty() && !hasShape(node)) problems << tr("no shape: an input of this layer is broken");
    return problems;
}

QVariant AnalysisTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const NodeInfo& node = document_->report().nodes[std::size_t(index.row())];
    const bool shaped = hasShape(node);
    const std::int64_t activationBytes = shaped ? node.outputShape.countPerImage() * bytesPerActivation : 0;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Layer: return QString::fromStdString(node.name);
        case Type: return QString::fromStdString(node.type);
        case OutputShape: return shaped ? formatShape(node.outputShape) : QStringLiteral("—");
        case Parameters: return shaped ? formatCount(node.parameters) : QStringLiteral("—");
        case Flops: return shaped ? formatFlops(node.forwardFlops) : QStringLiteral("—");
        case ActivationMemory: return shaped ? formatBytes(activationBytes) : QStringLiteral("—");
        case Problems: return problemsOf(index.row()).join("; ");
        }
    }
    if (role == sortRole) {
        switch (index.column()) {
        case OutputShape: return qlonglong(node.outputShape.countPerImage());
        case Parameters: return qlonglong(node.parameters);
        case Flops: return qlonglong(node.forwardFlops);
        case ActivationMemory: return qlonglong(activationBytes);
        default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Problems) return problemsOf(index.row()).join('\n');
    if (role == Qt::TextAlignmentRole && index.column() >= Parameters && index.column() <= ActivationMemory)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && !problemsOf(index.row()).isEmpty())
        return QBrush(problemColor(QGuiApplication::palette()));
    return {};
}

QVariant AnalysisTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Layer: return tr("Layer");
    case Type: return tr("Type");
    case OutputShape: return tr("Output shape");
    case Parameters: return tr("Parameters");
    case Flops: return tr("FLOPs per image");
    case ActivationMemory: return tr("Activations per image");
    case Problems: return tr("Problems");
    }
    return {};
}

}  // namespace cnnstudio::ui
