#include "cnnstudio/ui/history/run_history_panel.h"

#include <algorithm>

#include <QDesktopServices>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "cnnstudio/ui/history/image_classifier.h"

namespace cnnstudio::ui {
namespace {

constexpr int directoryRole = Qt::UserRole + 1;
// The Run column's width: the folder name whole where there is room, its end (time and model)
// at the least.
constexpr int roomyRunColumn = 200, narrowestRunColumn = 110;
// How it ended and how well come first: what a narrow list shows without scrolling. The start
// time follows them: the run's folder name begins with it.
enum Column { RunColumn, StatusColumn, BestColumn, TestColumn, EpochsColumn, StartedColumn, ModelColumn,
              DatasetColumn, BackendColumn };

QString percent(const std::optional<double>& fraction) {
    return fraction ? QString::number(*fraction * 100.0, 'f', 1) + '%' : QStringLiteral("—");
}

void addJson(QTreeWidgetItem* parent, QTreeWidget* tree, const QString& key, const QJsonValue& value) {
    auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree);
    item->setText(0, key);
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) addJson(item, tree, it.key(), it.value());
    } else if (value.isArray()) {
        const QJsonArray array = value.toArray();
        bool scalars = std::all_of(array.begin(), array.end(), [](const QJsonValue& v) { return !v.isObject() && !v.isArray(); });
        if (scalars) {
            QStringList parts;
            for (const QJsonValue& element : array) parts << element.toVariant().toString();
            item->setText(1, '[' + parts.join(", ") + ']');
        } else {
            for (qsizetype i = 0; i < array.size(); ++i) addJson(item, tree, QString::number(i), array[i]);
        }
    } else if (value.isBool()) {
        item->setText(1, value.toBool() ? "true" : "false");
    } else if (value.isNull()) {
        item->setText(1, "null");
    } else {
        item->setText(1, value.toVariant().toString());
    }
}

}  // namespace

RunHistoryPanel::RunHistoryPanel(QWidget* parent) : QWidget(parent) {
    root_ = new QLineEdit(defaultRunsRoot(), this);
    root_->setObjectName("runsRoot");
    auto* browse = new QPushButton(tr("Browse…"), this);
    auto* refreshButton = new QPushButton(tr("Refresh"), this);
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);

    runs_ = new QTreeWidget(this);
    runs_->setObjectName("runList");
    runs_->setRootIsDecorated(false);
    runs_->setAlternatingRowColors(true);
    runs_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    runs_->setHeaderLabels({tr("Run"), tr("Status"), tr("Best val."), tr("Test"), tr("Epochs"), tr("Started"),
                            tr("Model"), tr("Data set"), tr("Backend")});
    runs_->headerItem()->setToolTip(BestColumn, tr("Best validation accuracy"));
    runs_->headerItem()->setToolTip(TestColumn, tr("Test accuracy of the final model"));
    runs_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The folder's name (start time, then model) is elided at its start in a narrow column: its
    // end, the model, tells runs apart; the Started column has the time.
    runs_->header()->setSectionResizeMode(RunColumn, QHeaderView::Interactive);
    runs_->header()->resizeSection(RunColumn, roomyRunColumn);
    runsViewport_ = runs_->viewport();
    runsViewport_->installEventFilter(this);
    runs_->header()->setStretchLastSection(false);
    runs_->setTextElideMode(Qt::ElideLeft);
    runs_->setContextMenuPolicy(Qt::CustomContextMenu);

    details_ = new QTreeWidget(this);
    details_->setObjectName("runConfig");
    details_->setHeaderLabels({tr("Setting"), tr("Value")});
    details_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);

    open_ = new QPushButton(tr("Open"), this);
    open_->setToolTip(tr("Show the run's curves and confusion matrix"));
    compare_ = new QPushButton(tr("Compare"), this);
    compare_->setToolTip(tr("Select two or more runs (Ctrl+click) to overlay their curves"));
    resume_ = new QPushButton(tr("Resume"), this);
    resume_->setToolTip(tr("Continue a stopped run from its latest checkpoint"));
    reveal_ = new QPushButton(tr("Show folder"), this);
    reveal_->setToolTip(tr("Open the run's folder in the file manager"));

    auto* rootRow = new QHBoxLayout;
    rootRow->addWidget(new QLabel(tr("Runs folder"), this));
    rootRow->addWidget(root_, 1);
    rootRow->addWidget(browse);
    rootRow->addWidget(refreshButton);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(open_);
    buttons->addWidget(compare_);
    buttons->addWidget(resume_);
    buttons->addStretch(1);
    buttons->addWidget(reveal_);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(runs_);
    split->addWidget(details_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(rootRow);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);
    layout->addLayout(buttons);

    // A narrow field shows the end of a long path: the whole of it on hover.
    connect(root_, &QLineEdit::textChanged, root_, &QLineEdit::setToolTip);
    root_->setToolTip(root_->text());
    connect(browse, &QPushButton::clicked, this, &RunHistoryPanel::browse);
    connect(refreshButton, &QPushButton::clicked, this, &RunHistoryPanel::refresh);
    connect(root_, &QLineEdit::editingFinished, this, [this] {
        emit runsRootChanged(runsRoot());
        refresh();
    });
    connect(runs_, &QTreeWidget::itemSelectionChanged, this, &RunHistoryPanel::updateSelection);
    connect(runs_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        emit openRequested(item->data(0, directoryRole).toString());
    });
    connect(open_, &QPushButton::clicked, this, [this] {
        if (const QStringList selected = selectedRunDirectories(); !selected.isEmpty()) emit openRequested(selected.first());
    });
    connect(compare_, &QPushButton::clicked, this, [this] {
        if (const QStringList selected = selectedRunDirectories(); selected.size() >= 2) emit compareRequested(selected);
    });
    connect(resume_, &QPushButton::clicked, this, [this] {
        if (const QStringList selected = selectedRunDirectories(); selected.size() == 1) emit resumeRequested(selected.first());
    });
    connect(reveal_, &QPushButton::clicked, this, &RunHistoryPanel::revealSelected);
    connect(runs_, &QTreeWidget::customContextMenuRequested, this, &RunHistoryPanel::showRunMenu);
    connect(&scanner_, &QFutureWatcher<QList<RunRecord>>::finished, this, [this] {
        records_ = scanner_.result();
        showRecords();
        emit scanned();
        if (rescanPending_) {
            rescanPending_ = false;
            refresh();
        }
    });
    updateSelection();
}

RunHistoryPanel::~RunHistoryPanel() {
    // Hiding a shown panel as it goes takes the focus from the runs-folder field, whose
    // editingFinished would rescan with the scanner already destroyed.
    root_->disconnect(this);
}

bool RunHistoryPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == runsViewport_ && event->type() == QEvent::Resize) fitRunColumn();
    return QWidget::eventFilter(watched, event);
}

// The columns that say how each run went (status, best, test, epochs) show without scrolling in
// a narrow list (audit item 19, 1024x700): the Run column takes what they leave, down to its
// narrowest; the start time, model, data set and backend, which the run's name mostly says, scroll.
void RunHistoryPanel::fitRunColumn() {
    QHeaderView* header = runs_->header();
    int outcome = 0;
    for (int column = StatusColumn; column <= EpochsColumn; ++column) outcome += header->sectionSize(column);
    header->resizeSection(RunColumn,
                          std::clamp(runs_->viewport()->width() - outcome, narrowestRunColumn, roomyRunColumn));
}

QString RunHistoryPanel::runsRoot() const { return root_->text().trimmed(); }

void RunHistoryPanel::setRunsRoot(const QString& root) {
    if (root == runsRoot()) {
        refresh();
        return;
    }
    root_->setText(root);
    emit runsRootChanged(root);
    refresh();
}

void RunHistoryPanel::refresh() {
    if (scanner_.isRunning()) {
        rescanPending_ = true;
        return;
    }
    summary_->setText(tr("Reading %1…").arg(runsRoot()));
    scanner_.setFuture(QtConcurrent::run([root = runsRoot()] { return scanRunsFolder(root); }));
}

void RunHistoryPanel::browse() {
    const QString chosen = QFileDialog::getExistingDirectory(this, tr("Runs folder"), runsRoot());
    if (!chosen.isEmpty()) setRunsRoot(chosen);
}

void RunHistoryPanel::showRecords() {
    const QStringList selected = selectedRunDirectories();
    runs_->clear();
    for (const RunRecord& record : records_) {
        auto* item = new QTreeWidgetItem(runs_);
        item->setData(0, directoryRole, record.directory);
        item->setText(RunColumn, record.name);
        item->setText(StartedColumn, QLocale().toString(record.started, QStringLiteral("d MMM HH:mm")));
        item->setText(ModelColumn, record.model);
        item->setText(DatasetColumn, record.dataset);
        item->setText(BackendColumn, record.backend);
        item->setText(EpochsColumn, record.epochsPlanned > 0 ? tr("%1/%2").arg(record.epochsRun).arg(record.epochsPlanned)
                                                             : QString::number(record.epochsRun));
        item->setText(BestColumn, percent(record.bestValidationAccuracy));
        item->setText(TestColumn, percent(record.testAccuracy));
        item->setText(StatusColumn, isTraining(record.directory) ? tr("training") : record.status);
        QString tip = tr("%1\nstarted %2").arg(record.directory, QLocale().toString(record.started, QLocale::ShortFormat));
        if (!record.failureReason.isEmpty()) tip += '\n' + tr("Failed: %1").arg(record.failureReason);
        if (!record.problem.isEmpty()) tip += '\n' + record.problem;
        for (int column = 0; column < runs_->columnCount(); ++column) item->setToolTip(column, tip);
        if (selected.contains(record.directory)) item->setSelected(true);
    }
    fitRunColumn();  // the other columns now fit their contents
    summary_->setText(records_.isEmpty() ? tr("No runs in %1 yet.").arg(runsRoot())
                                         : tr("%n run(s) in %1", nullptr, int(records_.size())).arg(runsRoot()));
    updateSelection();
}

QStringList RunHistoryPanel::selectedRunDirectories() const {
    QStringList directories;
    for (QTreeWidgetItem* item : runs_->selectedItems()) directories << item->data(0, directoryRole).toString();
    return directories;
}

void RunHistoryPanel::selectRun(const QString& directory) { selectRuns({directory}); }

void RunHistoryPanel::selectRuns(const QStringList& directories) {
    QStringList wanted;
    for (const QString& directory : directories) wanted << QDir(directory).absolutePath();
    runs_->clearSelection();
    for (int row = 0; row < runs_->topLevelItemCount(); ++row)
        if (wanted.contains(runs_->topLevelItem(row)->data(0, directoryRole).toString())) {
            runs_->topLevelItem(row)->setSelected(true);
            runs_->scrollToItem(runs_->topLevelItem(row));
        }
}

void RunHistoryPanel::updateSelection() {
    const QStringList selected = selectedRunDirectories();
    const RunRecord* record = nullptr;
    if (selected.size() == 1)
        for (const RunRecord& candidate : records_)
            if (candidate.directory == selected.first()) record = &candidate;
    open_->setEnabled(!selected.isEmpty());
    compare_->setEnabled(selected.size() >= 2);
    compare_->setText(selected.size() > 2 ? tr("Compare %1").arg(selected.size()) : tr("Compare"));
    resume_->setEnabled(record && record->resumable && !isTraining(record->directory));
    reveal_->setEnabled(record != nullptr);
    details_->clear();
    if (!record) return;
    if (!record->failureReason.isEmpty()) addJson(nullptr, details_, tr("failure"), record->failureReason);
    if (!record->problem.isEmpty()) addJson(nullptr, details_, tr("problem"), record->problem);
    for (auto it = record->config.begin(); it != record->config.end(); ++it)
        addJson(nullptr, details_, it.key(), it.value());
    details_->expandToDepth(0);
}

void RunHistoryPanel::setTrainingRun(const QString& directory) {
    trainingRun_ = directory.isEmpty() ? QString() : QDir(directory).absolutePath();
    showRecords();
}

bool RunHistoryPanel::isTraining(const QString& directory) const {
    return !trainingRun_.isEmpty() && QDir(directory).absolutePath() == trainingRun_;
}

void RunHistoryPanel::showRunMenu(const QPoint& position) {
    QTreeWidgetItem* clicked = runs_->itemAt(position);
    if (!clicked) return;
    if (!clicked->isSelected()) {
        runs_->clearSelection();
        clicked->setSelected(true);
    }
    const QStringList selected = selectedRunDirectories();
    QMenu menu(this);
    menu.addAction(tr("Open"), this, [this, selected] { emit openRequested(selected.first()); });
    QAction* compare = menu.addAction(tr("Compare %n runs", nullptr, int(selected.size())), this,
                                      [this, selected] { emit compareRequested(selected); });
    compare->setEnabled(selected.size() >= 2);
    QAction* resume = menu.addAction(tr("Resume"), this, [this, selected] { emit resumeRequested(selected.first()); });
    resume->setEnabled(resume_->isEnabled());
    QAction* classify = menu.addAction(tr("Classify an image with this run…"), this,
                                       [this, selected] { emit classifyRequested(selected.first()); });
    classify->setEnabled(selected.size() == 1 && hasTrainedModel(selected.first()));
    QAction* reveal = menu.addAction(tr("Show folder"), this, &RunHistoryPanel::revealSelected);
    reveal->setEnabled(selected.size() == 1);
    menu.addSeparator();
    QAction* remove = menu.addAction(tr("Delete %n run(s)…", nullptr, int(selected.size())), this,
                                     &RunHistoryPanel::deleteSelectedAfterAsking);
    remove->setEnabled(std::none_of(selected.begin(), selected.end(),
                                    [this](const QString& directory) { return isTraining(directory); }));
    menu.exec(runs_->viewport()->mapToGlobal(position));
}

void RunHistoryPanel::revealSelected() {
    if (const QStringList selected = selectedRunDirectories(); selected.size() == 1)
        QDesktopServices::openUrl(QUrl::fromLocalFile(selected.first()));
}

void RunHistoryPanel::deleteSelectedAfterAsking() {
    const QStringList selected = selectedRunDirectories();
    if (selected.isEmpty()) return;
    QStringList names;
    for (const QString& directory : selected) names << QDir(directory).dirName();
    const auto answer = QMessageBox::question(
        this, tr("Delete runs"),
        tr("Delete %n run folder(s) with their checkpoints and models? This cannot be undone.\n\n%1", nullptr,
           int(selected.size()))
            .arg(names.join('\n')),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) return;
    QStringList failed;
    for (const QString& directory : selected)
        if (!QDir(directory).removeRecursively()) failed << directory;
    if (!failed.isEmpty())
        QMessageBox::warning(this, tr("Delete runs"),
                             tr("Could not delete everything in:\n%1\nCheck that you may write there.").arg(failed.join('\n')));
    refresh();
}

}  // namespace cnnstudio::ui
