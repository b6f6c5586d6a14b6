#include "cnnstudio/ui/designer/problems_panel.h"

#include <QLabel>
#include <QListWidget>
#include <QStyle>
#include <QVBoxLayout>

#include "cnnstudio/ui/designer/design_document.h"

namespace cnnstudio::ui {
namespace {

constexpr int nodeRole = Qt::UserRole + 1;

}  // namespace

ProblemsPanel::ProblemsPanel(DesignDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    summary_ = new QLabel(this);
    list_ = new QListWidget(this);
    list_->setObjectName("problemsList");
    list_->setWordWrap(true);
    list_->setAlternatingRowColors(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(summary_);
    layout->addWidget(list_);
    connect(list_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        if (const QString node = item->data(nodeRole).toString(); !node.isEmpty()) emit nodeActivated(node);
    });
    connect(list_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        if (const QString node = item->data(nodeRole).toString(); !node.isEmpty()) emit nodeActivated(node);
    });
    connect(document_, &DesignDocument::analysisChanged, this, &ProblemsPanel::refresh);
    refresh();
}

int ProblemsPanel::problemCount() const { return list_->count(); }

QString ProblemsPanel::problemText(int row) const {
    const QListWidgetItem* item = list_->item(row);
    return item ? item->text() : QString();
}

void ProblemsPanel::refresh() {
    list_->clear();
    const QIcon warning = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    for (const auto& [node, message] : document_->report().problems) {
        const QString name = QString::fromStdString(node);
        auto* item = new QListWidgetItem(
            warning, name.isEmpty() ? QString::fromStdString(message)
                                    : tr("%1: %2").arg(name, QString::fromStdString(message)),
            list_);
        item->setData(nodeRole, name);
        item->setToolTip(tr("Click to select %1 on the canvas").arg(name));
    }
    const int count = list_->count();
    summary_->setText(count == 0 ? tr("No problems: every node has a shape.")
                                 : tr("%n problem(s) — click one to select its node", nullptr, count));
    emit problemCountChanged(count);
}

}  // namespace cnnstudio::ui
