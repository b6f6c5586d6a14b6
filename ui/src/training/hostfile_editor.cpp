#include "cnnstudio/ui/training/hostfile_editor.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include "cnnstudio/ui/training/run_settings.h"
#include "common/layer_colors.h"

namespace cnnstudio::ui {

HostfileEditor::HostfileEditor(QWidget* parent) : QWidget(parent) {
    editor_ = new QPlainTextEdit(this);
    editor_->setObjectName("hostfileText");
    editor_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    editor_->setPlaceholderText(tr("# one line per node\nnode1 slots=4\nnode2 slots=4"));
    editor_->setTabChangesFocus(true);
    editor_->setMinimumHeight(70);
    editor_->setMaximumHeight(110);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(editor_);
    layout->addWidget(status_);
    connect(editor_, &QPlainTextEdit::textChanged, this, [this] {
        validate();
        emit textChanged();
    });
    validate();
}

QString HostfileEditor::text() const { return editor_->toPlainText(); }

void HostfileEditor::setText(const QString& text) {
    if (text != editor_->toPlainText()) editor_->setPlainText(text);
}

void HostfileEditor::setRequirement(int nodes, int ranksPerNode) {
    nodes_ = nodes;
    ranksPerNode_ = ranksPerNode;
    validate();
}

void HostfileEditor::validate() {
    problems_ = hostfileProblems(editor_->toPlainText(), nodes_, ranksPerNode_);
    QPalette palette = this->palette();
    if (problems_.isEmpty()) {
        status_->setText(tr("Hostfile fine for %n node(s).", nullptr, nodes_));
        status_->setPalette(palette);
    } else {
        status_->setText(problems_.join('\n'));
        palette.setColor(QPalette::WindowText, problemColor(palette));
        status_->setPalette(palette);
    }
}

}  // namespace cnnstudio::ui
