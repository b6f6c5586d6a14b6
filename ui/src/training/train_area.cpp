#include "cnnstudio/ui/training/train_area.h"

#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "cnnstudio/ui/training/run_settings_panel.h"
#include "cnnstudio/ui/training/training_dashboard.h"

namespace cnnstudio::ui {

TrainArea::TrainArea(QWidget* parent) : QWidget(parent) {
    settings_ = new RunSettingsPanel(this);
    settings_->setObjectName("runSettings");
    dashboard_ = new TrainingDashboard(this);
    dashboard_->setObjectName("trainingDashboard");
    dashboard_->setRunControlsVisible(true);
    dashboard_->setRunning(false);
    train_ = new QPushButton(tr("Train"), this);
    train_->setObjectName("trainButton");
    train_->setToolTip(tr("Train the network of the Design page with these settings (F5)"));
    QFont bold = train_->font();
    bold.setBold(true);
    train_->setFont(bold);
    train_->setMinimumHeight(32);

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(settings_, 1);
    leftLayout->addWidget(train_);
    auto* columns = new QSplitter(Qt::Horizontal, this);
    columns->addWidget(left);
    columns->addWidget(dashboard_);
    columns->setStretchFactor(0, 0);
    columns->setStretchFactor(1, 1);
    columns->setSizes({470, 970});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(columns);
    connect(train_, &QPushButton::clicked, this, &TrainArea::trainRequested);
}

}  // namespace cnnstudio::ui
