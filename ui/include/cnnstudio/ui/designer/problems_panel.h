// ProblemsPanel: what the shape analysis rejects, one line per problem, naming the node.
// Clicking a line asks for that node to be selected.
#pragma once

#include <QWidget>

class QListWidget;
class QLabel;

namespace cnnstudio::ui {

class DesignDocument;

class ProblemsPanel : public QWidget {
    Q_OBJECT

public:
    explicit ProblemsPanel(DesignDocument* document, QWidget* parent = nullptr);

    int problemCount() const;
    QString problemText(int row) const;

signals:
    void nodeActivated(const QString& node);
    void problemCountChanged(int count);

private:
    void refresh();

    DesignDocument* document_;
    QLabel* summary_;
    QListWidget* list_;
};

}  // namespace cnnstudio::ui
