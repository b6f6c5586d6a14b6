#include "cnnstudio/ui/shortcuts_dialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace cnnstudio::ui {
namespace {

// "&Zoom in" -> "Zoom in"
QString plainText(QString text) { return text.remove(QRegularExpression("&(?!&)")); }

void addMenu(QTreeWidget* list, const QMenu* menu, const QString& path) {
    QTreeWidgetItem* group = nullptr;
    for (const QAction* action : menu->actions()) {
        if (action->menu()) {
            addMenu(list, action->menu(), path + QStringLiteral(" ▸ ") + plainText(action->text()));
            continue;
        }
        QStringList keys;
        for (const QKeySequence& shortcut : action->shortcuts())
            keys << shortcut.toString(QKeySequence::NativeText);
        if (keys.isEmpty()) continue;
        if (!group) {
            group = new QTreeWidgetItem(list, {path});
            group->setFirstColumnSpanned(true);
            QFont bold = group->font(0);
            bold.setBold(true);
            group->setFont(0, bold);
        }
        new QTreeWidgetItem(group, {plainText(action->text()), keys.join(QStringLiteral(", "))});
    }
}

}  // namespace

ShortcutsDialog::ShortcutsDialog(const QMenuBar* menus, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Keyboard shortcuts"));
    setObjectName("shortcutsDialog");
    list_ = new QTreeWidget(this);
    list_->setHeaderLabels({tr("Action"), tr("Keys")});
    list_->setRootIsDecorated(false);
    list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    list_->header()->setStretchLastSection(false);
    for (const QAction* action : menus->actions())
        if (action->menu()) addMenu(list_, action->menu(), plainText(action->text()));
    list_->expandAll();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(list_);
    layout->addWidget(buttons);
    resize(460, 560);
}

int ShortcutsDialog::shortcutCount() const {
    int count = 0;
    for (int i = 0; i < list_->topLevelItemCount(); ++i) count += list_->topLevelItem(i)->childCount();
    return count;
}

}  // namespace cnnstudio::ui
