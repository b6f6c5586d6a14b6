// ShortcutsDialog: Help ▸ Keyboard shortcuts — every action of the window's menus that has a
// shortcut, grouped by menu, read from the menus themselves so that it never goes out of date.
#pragma once

#include <QDialog>

class QMenuBar;
class QTreeWidget;

namespace cnnstudio::ui {

class ShortcutsDialog : public QDialog {
    Q_OBJECT

public:
    explicit ShortcutsDialog(const QMenuBar* menus, QWidget* parent = nullptr);

    int shortcutCount() const;

private:
    QTreeWidget* list_;
};

}  // namespace cnnstudio::ui
