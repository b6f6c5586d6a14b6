#include "designer/document_undo_keys.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QKeyEvent>
#include <QLineEdit>
#include <QObject>

namespace cnnstudio::ui {

namespace {

bool isUndoOrRedo(const QKeyEvent* key) {
    return key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo) ||
           key->keyCombination() == QKeyCombination(Qt::ControlModifier, Qt::Key_Y);
}

// Declines the field's claim on the undo keys (a ShortcutOverride left ignored lets the
// window's shortcut fire) after committing what the field holds.
class UndoKeysToDocument : public QObject {
public:
    using QObject::QObject;

    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() != QEvent::ShortcutOverride || !isUndoOrRedo(static_cast<QKeyEvent*>(event))) return false;
        if (auto* line = qobject_cast<QLineEdit*>(watched); line && line->isModified() && line->hasAcceptableInput()) {
            // The field's owner commits on editingFinished; a value already committed is no new edit.
            emit line->editingFinished();
            line->setModified(false);
        } else if (auto* box = qobject_cast<QAbstractSpinBox*>(watched)) {
            box->interpretText();
        }
        event->ignore();
        return true;
    }
};

}  // namespace

void giveUndoKeysToTheDocument(QWidget* editor) {
    QList<QWidget*> fields{editor};
    fields += editor->findChildren<QWidget*>();
    for (QWidget* field : fields) {
        // A spin box's or combo box's own line edit never has the focus: its owner handles the keys.
        const bool ownLineEdit = qobject_cast<QAbstractSpinBox*>(field->parentWidget()) ||
                                 qobject_cast<QComboBox*>(field->parentWidget());
        if ((qobject_cast<QLineEdit*>(field) && !ownLineEdit) || qobject_cast<QAbstractSpinBox*>(field))
            field->installEventFilter(new UndoKeysToDocument(field));
    }
}

}  // namespace cnnstudio::ui
