#include "cnnstudio/layer_types.h"
// InspectorPanel: edits the selected node — its name, and its parameters with one editor per
// parameter of the layer catalogue's ParamInfo, made by the factory for its kind
// (ui/src/designer/param_editors.h) — and shows what the shape analysis says about the node.
// Every change is one undoable document edit. With no node selected it summarises the network.
#pragma once

#include <QHash>
#include <QWidget>

#include <nlohmann/json.hpp>

class QFormLayout;
class QLabel;
class QLineEdit;

namespace cnnstudio {
struct ParamInfo;
}

namespace cnnstudio::ui {

class DesignDocument;
class ParamEditor;

class InspectorPanel : public QWidget {
    Q_OBJECT

public:
    explicit InspectorPanel(DesignDocument* document, QWidget* parent = nullptr);

    QString node() const { return node_; }
    // The editor of one parameter of the shown node (objectName "param:<name>"), null if none.
    QWidget* editorFor(const QString& param) const;
    QLineEdit* nameEditor() const { return nameEdit_; }

public slots:
    void setNode(const QString& name);  // empty: show the network summary

signals:
    void editRefused(const QString& message);

private:
    void rebuild();
    void refreshValues();
    void refreshInfo();
    void addEditor(const ParamInfo& param);
    void commit(const QString& param, const nlohmann::json& value);
    nlohmann::json currentValue(const ParamInfo& param) const;

    DesignDocument* document_;
    QString node_, nodeType_;
    QLabel* title_;
    QLabel* help_;
    QWidget* nameRow_;
    QLineEdit* nameEdit_;
    QWidget* paramsBox_;
    QFormLayout* paramsForm_;
    QLabel* info_;
    QHash<QString, ParamEditor*> editors_;  // by parameter name; each lives with its widget
};

}  // namespace cnnstudio::ui
