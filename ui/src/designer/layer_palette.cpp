#include "cnnstudio/ui/designer/layer_palette.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QMimeData>
#include <QPainter>
#include <QPixmap>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "cnnstudio/layer_types.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "common/layer_colors.h"
#include "designer/tool_tips.h"

namespace cnnstudio::ui {
namespace {

constexpr int typeRole = Qt::UserRole + 1;

// A tree whose items drag as layer types the canvas understands.
class LayerTree : public QTreeWidget {
public:
    using QTreeWidget::QTreeWidget;

protected:
    QStringList mimeTypes() const override { return {DesignerCanvas::layerMimeType}; }
    QMimeData* mimeData(const QList<QTreeWidgetItem*>& items) const override {
        if (items.isEmpty() || items.first()->data(0, typeRole).isNull()) return nullptr;
        auto* data = new QMimeData;
        data->setData(DesignerCanvas::layerMimeType, items.first()->data(0, typeRole).toString().toUtf8());
        data->setText(items.first()->data(0, typeRole).toString());
        return data;
    }
};

QIcon swatch(const QColor& color) {
    QPixmap pixmap(14, 14);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setBrush(color);
    painter.setPen(color.darker(130));
    painter.drawRoundedRect(QRectF(1.5, 1.5, 11, 11), 3, 3);
    return QIcon(pixmap);
}

}  // namespace

LayerPalette::LayerPalette(QWidget* parent) : QWidget(parent) {
    filter_ = new QLineEdit(this);
    filter_->setPlaceholderText(tr("Filter layers"));
    filter_->setClearButtonEnabled(true);
    tree_ = new LayerTree(this);
    tree_->setObjectName("layerTree");
    tree_->setHeaderHidden(true);
    tree_->setRootIsDecorated(false);
    tree_->setDragEnabled(true);
    tree_->setDragDropMode(QAbstractItemView::DragOnly);
    tree_->setSelectionMode(QAbstractItemView::SingleSelection);
    tree_->setIndentation(8);

    QHash<QString, QTreeWidgetItem*> categories;
    for (const LayerTypeInfo& info : layerTypes()) {
        const QString category = QString::fromStdString(info.category);
        QTreeWidgetItem*& group = categories[category];
        if (!group) {
            group = new QTreeWidgetItem(tree_, {category});
            QFont bold = group->font(0);
            bold.setBold(true);
            group->setFont(0, bold);
            group->setFlags(Qt::ItemIsEnabled);
            group->setExpanded(true);
        }
        auto* item = new QTreeWidgetItem(group, {QString::fromStdString(info.type)});
        item->setData(0, typeRole, QString::fromStdString(info.type));
        item->setIcon(0, swatch(layerCategoryColor(category)));
        item->setToolTip(0, wrappedToolTip(QString::fromStdString(info.help)));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
    }
    tree_->expandAll();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(filter_);
    layout->addWidget(tree_);

    connect(filter_, &QLineEdit::textChanged, this, &LayerPalette::applyFilter);
    connect(tree_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
        if (const QVariant type = item->data(0, typeRole); !type.isNull()) emit layerChosen(type.toString());
    });
    connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (const QVariant type = item->data(0, typeRole); !type.isNull()) emit layerActivated(type.toString());
    });
}

QStringList LayerPalette::layerTypeNames() const {
    QStringList names;
    for (int group = 0; group < tree_->topLevelItemCount(); ++group)
        for (int child = 0; child < tree_->topLevelItem(group)->childCount(); ++child)
            names.append(tree_->topLevelItem(group)->child(child)->data(0, typeRole).toString());
    return names;
}

void LayerPalette::applyFilter(const QString& text) {
    for (int group = 0; group < tree_->topLevelItemCount(); ++group) {
        QTreeWidgetItem* groupItem = tree_->topLevelItem(group);
        bool anyShown = false;
        for (int child = 0; child < groupItem->childCount(); ++child) {
            QTreeWidgetItem* item = groupItem->child(child);
            const bool shown = text.isEmpty() || item->text(0).contains(text, Qt::CaseInsensitive) ||
                               groupItem->text(0).contains(text, Qt::CaseInsensitive);
            item->setHidden(!shown);
            anyShown |= shown;
        }
        groupItem->setHidden(!anyShown);
    }
}

}  // namespace cnnstudio::ui
