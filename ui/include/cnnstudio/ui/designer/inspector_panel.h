// InspectorPanel: edits the selected node. Its editors are built from the layer catalogue's
// ParamInfo — a bounded spin box for "int", a validated field for "float", a check box for "bool",
// two spin boxes for "int-pair", valid/same/explicit for "padding" — plus the node's name, and it
// shows what the shape analysis says about the node. Every change is one undoable document edit.
// With no node selected it summarises the network.
#pragma once

#include <functional>

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

class InspectorPanel : public QWidget {
    Q_OBJECT

public:
    explicit InspectorPanel(DesignDocument* document, QWidget* parent = nullptr);

    QString node() const { return node_; }
    // The editor of one parameter of the shown node (objectName "param:<name>"), null if none.
    QWidget* editorFor(const QString& param) const { return editors_.value(param); }
    QLineEdit* nameEditor() const { return nameEdit_; }

public slots:
    void setNode(const QString& name);  // empty: show the network summary

signals:
    void editRefused(const QString& message);

private:
    void rebuild();
    void refreshValues();
    void refreshInfo();
    QWidget* createEditor(const ParamInfo& param);
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
    QHash<QString, QWidget*> editors_;
    // Puts a value (the node's, or the default when the node has none) into one editor.
    QHash<QString, std::function<void(const nlohmann::json&)>> loaders_;
};

}  // namespace cnnstudio::ui
