#include "cnnstudio/layer_types.h"
// The inspector's editors, one class per parameter kind of the layer catalogue (ParamInfo::kind
// in cnnstudio/spec.h): "int" a bounded spin box, "float" a validated field, "bool" a check box,
// "int-pair" two spin boxes, "padding" valid/same/explicit; a kind this version does not know is
// edited as JSON text. A new kind is one more editor class and one line in the factory table.
#pragma once

#include <functional>

#include <QObject>
#include <QString>

#include <nlohmann/json.hpp>

class QWidget;

namespace cnnstudio {
struct ParamInfo;
}

namespace cnnstudio::ui {

// What an editor reports to the inspector.
struct ParamEditorHooks {
    std::function<void(const nlohmann::json&)> commit;  // the user set this value: one undoable edit
    std::function<void(const QString&)> refuse;         // the text holds no value: why, to show the user
};

// An editor is a child of its widget, so it lives exactly as long as the widget does.
class ParamEditor : public QObject {
public:
    QWidget* widget() const { return widget_; }
    // Shows `value` (the node's, or the default when the node has none) without committing it.
    virtual void load(const nlohmann::json& value) = 0;

protected:
    ParamEditor(QWidget* widget, ParamEditorHooks hooks);
    void commit(const nlohmann::json& value) const { hooks_.commit(value); }
    void refuse(const QString& why) const { hooks_.refuse(why); }

private:
    QWidget* widget_;
    ParamEditorHooks hooks_;
};

// The editor for the parameter's kind, its widget a child of `parent`.
ParamEditor* createParamEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks);

// The parameter's help with its range and default, for the tooltips of its label and editor.
QString describeParam(const ParamInfo& param);

}  // namespace cnnstudio::ui
