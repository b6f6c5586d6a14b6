// HostfileEditor: a plain-text editor for the OpenMPI hostfile of a multi-node run, checked as
// you type ("host slots=N" lines, enough hosts and slots); problems show under the text.
#pragma once

#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace cnnstudio::ui {

class HostfileEditor : public QWidget {
    Q_OBJECT

public:
    explicit HostfileEditor(QWidget* parent = nullptr);

    QString text() const;
    void setText(const QString& text);
    // What the hostfile must provide; re-checks the text.
    void setRequirement(int nodes, int ranksPerNode);
    QStringList problems() const { return problems_; }

signals:
    void textChanged();

private:
    void validate();

    QPlainTextEdit* editor_;
    QLabel* status_;
    int nodes_ = 1, ranksPerNode_ = 1;
    QStringList problems_;
};

}  // namespace cnnstudio::ui
