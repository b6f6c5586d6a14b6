// ManualDialog: Help ▸ Manual — a short guide to the three pages (design, train, run history),
// how a network is fitted to a data set, resuming and comparing runs, and where to get FER2013.
#pragma once

#include <QDialog>

class QTextBrowser;

namespace cnnstudio::ui {

class ManualDialog : public QDialog {
    Q_OBJECT

public:
    explicit ManualDialog(QWidget* parent = nullptr);

    QString text() const;

private:
    QTextBrowser* browser_;
};

}  // namespace cnnstudio::ui
