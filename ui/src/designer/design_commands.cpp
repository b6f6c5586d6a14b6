#include "designer/design_commands.h"

namespace cnnstudio::ui {

InsertNodeCommand::InsertNodeCommand(DesignDocument& document, DocumentEdit::RemovedNode node,
                                     QUndoCommand* parent)
    : QUndoCommand(parent), document_(document), node_(std::move(node)) {
    setText(QObject::tr("Add %1").arg(QString::fromStdString(node_.node.name)));
}

void InsertNodeCommand::redo() { DocumentEdit::insertNode(document_, node_); }

void InsertNodeCommand::undo() {
    DocumentEdit::eraseNode(document_, QString::fromStdString(node_.node.name));
}

EraseNodeCommand::EraseNodeCommand(DesignDocument& document, QString node, QUndoCommand* parent)
    : QUndoCommand(parent), document_(document), name_(std::move(node)) {
    setText(QObject::tr("Delete %1").arg(name_));
}

void EraseNodeCommand::redo() { erased_ = DocumentEdit::eraseNode(document_, name_); }

void EraseNodeCommand::undo() { DocumentEdit::insertNode(document_, erased_); }

SetInputsCommand::SetInputsCommand(DesignDocument& document, QString node, std::vector<std::string> before,
                                   std::vector<std::string> after, const QString& text, QUndoCommand* parent)
    : QUndoCommand(text, parent), document_(document), node_(std::move(node)),
      before_(std::move(before)), after_(std::move(after)) {}

void SetInputsCommand::redo() { DocumentEdit::setInputs(document_, node_, after_); }

void SetInputsCommand::undo() { DocumentEdit::setInputs(document_, node_, before_); }

SetParamCommand::SetParamCommand(DesignDocument& document, QString node, QString param,
                                 nlohmann::json before, nlohmann::json after)
    : document_(document), node_(std::move(node)), param_(std::move(param)),
      before_(std::move(before)), after_(std::move(after)) {
    setText(QObject::tr("Change %1 of %2").arg(param_, node_));
}

void SetParamCommand::redo() { DocumentEdit::setParams(document_, node_, after_); }

void SetParamCommand::undo() { DocumentEdit::setParams(document_, node_, before_); }

bool SetParamCommand::mergeWith(const QUndoCommand* other) {
    const auto* next = static_cast<const SetParamCommand*>(other);
    if (next->node_ != node_ || next->param_ != param_) return false;
    after_ = next->after_;
    return true;
}

MoveNodesCommand::MoveNodesCommand(DesignDocument& document, QHash<QString, QPointF> before,
                                   QHash<QString, QPointF> after, const QString& text)
    : QUndoCommand(text), document_(document), before_(std::move(before)), after_(std::move(after)) {}

void MoveNodesCommand::redo() {
    for (auto it = after_.cbegin(); it != after_.cend(); ++it)
        DocumentEdit::setPosition(document_, it.key(), it.value());
}

void MoveNodesCommand::undo() {
    for (auto it = before_.cbegin(); it != before_.cend(); ++it)
        DocumentEdit::setPosition(document_, it.key(), it.value());
}

RenameNodeCommand::RenameNodeCommand(DesignDocument& document, QString oldName, QString newName)
    : document_(document), oldName_(std::move(oldName)), newName_(std::move(newName)) {
    setText(QObject::tr("Rename %1 to %2").arg(oldName_, newName_));
}

void RenameNodeCommand::redo() { DocumentEdit::rename(document_, oldName_, newName_); }

void RenameNodeCommand::undo() { DocumentEdit::rename(document_, newName_, oldName_); }

RenameNetworkCommand::RenameNetworkCommand(DesignDocument& document, QString oldName, QString newName)
    : document_(document), oldName_(std::move(oldName)), newName_(std::move(newName)) {
    setText(QObject::tr("Rename the network to %1").arg(newName_));
}

void RenameNetworkCommand::redo() { DocumentEdit::setNetworkName(document_, newName_); }

void RenameNetworkCommand::undo() { DocumentEdit::setNetworkName(document_, oldName_); }

}  // namespace cnnstudio::ui
