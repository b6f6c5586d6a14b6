// NetworkFitNotice: on the Train page above the Train button, what the next run changes in the
// designed network to fit the chosen data set (a warning the user sees before training), or why
// the network cannot be trained on it, or why the batch does not fit the memory it trains in.
// Hidden when the network fits as drawn.
#pragma once

#include <QFrame>

#include "cnnstudio/ui/training/network_fit.h"

class QLabel;

namespace cnnstudio::ui {

class NetworkFitNotice : public QFrame {
    Q_OBJECT

public:
    explicit NetworkFitNotice(QWidget* parent = nullptr);

    void showFit(const NetworkFit& fit, const QString& networkName);
    QString text() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyColors();

    QLabel* icon_;
    QLabel* text_;
    bool refusing_ = false;
};

}  // namespace cnnstudio::ui
