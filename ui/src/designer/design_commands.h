// The undo commands of the designer: every edit of a DesignDocument is one of these (or a macro
// of several), so undo/redo replays exactly the primitive changes the edit made.
#pragma once

#include <QHash>
#include <QPointF>
#include <QString>
#include <QUndoCommand>

#include <nlohmann/json.hpp>

#include "cnnstudio/ui/designer/design_document.h"

namespace cnnstudio::ui {

// The commands' only door into the document's primitive edits.
class DocumentEdit {
public:
    using RemovedNode = DesignDocument::RemovedNode;
    static void insertNode(DesignDocument& d, const RemovedNode& n) { d.insertNodePrimitive(n); }
    static RemovedNode eraseNode(DesignDocument& d, const QString& n) { return d.eraseNodePrimitive(n); }
    static void setInputs(DesignDocument& d, const QString& n, const std::vector<std::string>& in) {
        d.setInputsPrimitive(n, in);
    }
    static void setParams(DesignDocument& d, const QString& n, const nlohmann::json& p) {
        d.setParamsPrimitive(n, p);
    }
    static void setPosition(DesignDocument& d, const QString& n, QPointF p) { d.setPositionPrimitive(n, p); }
    static void rename(DesignDocument& d, const QString& from, const QString& to) {
        d.renamePrimitive(from, to);
    }
    static void setNetworkName(DesignDocument& d, const QString& name) { d.setNetworkNamePrimitive(name); }
};

class InsertNodeCommand : public QUndoCommand {
public:
    InsertNodeCommand(DesignDocument& document, DocumentEdit::RemovedNode node, QUndoCommand* parent = nullptr);
    void redo() override;
    void undo() override;

private:
    DesignDocument& document_;
    DocumentEdit::RemovedNode node_;
};

class EraseNodeCommand : public QUndoCommand {
public:
    EraseNodeCommand(DesignDocument& document, QString node, QUndoCommand* parent = nullptr);
    void redo() override;
    void undo() override;

private:
    DesignDocument& document_;
    QString name_;
    DocumentEdit::RemovedNode erased_;
};

class SetInputsCommand : public QUndoCommand {
public:
    SetInputsCommand(DesignDocument& document, QString node, std::vector<std::string> before,
                     std::vector<std::string> after, const QString& text, QUndoCommand* parent = nullptr);
    void redo() override;
    void undo() override;

private:
    DesignDocument& document_;
    QString node_;
    std::vector<std::string> before_, after_;
};

// Consecutive changes of the same parameter of the same node (spin box arrows) merge into one step.
class SetParamCommand : public QUndoCommand {
public:
    SetParamCommand(DesignDocument& document, QString node, QString param, nlohmann::json before,
                    nlohmann::json after);
    void redo() override;
    void undo() override;
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override;

private:
    DesignDocument& document_;
    QString node_, param_;
    nlohmann::json before_, after_;  // the node's whole params object
};

class MoveNodesCommand : public QUndoCommand {
public:
    MoveNodesCommand(DesignDocument& document, QHash<QString, QPointF> before,
                     QHash<QString, QPointF> after, const QString& text);
    void redo() override;
    void undo() override;

private:
    DesignDocument& document_;
    QHash<QString, QPointF> before_, after_;
};

class RenameNodeCommand : public QUndoCommand {
public:
    RenameNodeCommand(DesignDocument& document, QString oldName, QString newName);
    void redo() override;
    void undo() override;

private:
    DesignDocument& document_;
    QString oldName_, newName_;
};

class RenameNetworkCommand : public QUndoCommand {
public:
    RenameNetworkCommand(DesignDocument& document, QString oldName, QString newName);
    void redo() override;
    void undo() override;

private:
    DesignDocument& document_;
    QString oldName_, newName_;
};

}  // namespace cnnstudio::ui
