#include "common/wheel_guard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QObject>
#include <QWidget>

namespace cnnstudio::ui {

namespace {

// Ignores the wheel for a field without focus, so that QApplication hands it on to the parents
// (the scroll area) instead of the field stepping its value.
class UnfocusedWheelFilter : public QObject {
public:
    using QObject::QObject;

    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() != QEvent::Wheel) return false;
        auto* field = qobject_cast<QWidget*>(watched);
        if (!field || field->hasFocus()) return false;
        event->ignore();
        return true;
    }
};

}  // namespace

void letWheelScrollPastUnfocusedFields(QWidget* panel) {
    const QString filterName = QStringLiteral("unfocusedWheelFilter");
    QObject* filter = panel->findChild<QObject*>(filterName, Qt::FindDirectChildrenOnly);
    if (!filter) {
        filter = new UnfocusedWheelFilter(panel);
        filter->setObjectName(filterName);
    }
    QList<QWidget*> fields;
    for (QAbstractSpinBox* box : panel->findChildren<QAbstractSpinBox*>()) fields << box;
    for (QComboBox* box : panel->findChildren<QComboBox*>()) fields << box;
    for (QWidget* field : fields) {
        // Qt's default for these is WheelFocus: a wheel turn over the field would focus it first.
        field->setFocusPolicy(Qt::StrongFocus);
        field->installEventFilter(filter);
    }
}

}  // namespace cnnstudio::ui
