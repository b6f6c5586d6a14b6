#include "cnnstudio/ui/history/classify_image_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImageReader>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

constexpr int pictureSide = 192;
constexpr int classesShown = 5;

}  // namespace

ClassifyImageDialog::ClassifyImageDialog(const QList<RunRecord>& runs, const QString& selected, QWidget* parent)
    : QDialog(parent), classifier_(new ImageClassifier(this)) {
    setWindowTitle(tr("Classify an image"));
    setObjectName("classifyImageDialog");
    run_ = new QComboBox(this);
    run_->setObjectName("classifyRun");
    run_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    run_->setMinimumContentsLength(28);
    for (const RunRecord& record : runs) {
        if (!hasTrainedModel(record.directory)) continue;
        run_->addItem(tr("%1 — %2 on %3").arg(record.name, record.model, record.dataset), record.directory);
        if (record.directory == selected) run_->setCurrentIndex(run_->count() - 1);
    }
    image_ = new QLineEdit(this);
    image_->setObjectName("classifyImagePath");
    image_->setPlaceholderText(tr("a png or jpg file"));
    auto* browse = new QPushButton(tr("Browse…"), this);
    picture_ = new QLabel(this);
    picture_->setObjectName("classifyPicture");
    picture_->setFixedSize(pictureSide, pictureSide);
    picture_->setAlignment(Qt::AlignCenter);
    picture_->setFrameShape(QFrame::StyledPanel);
    results_ = new QTreeWidget(this);
    results_->setObjectName("classifyResults");
    results_->setHeaderLabels({tr("Class"), tr("Probability")});
    results_->setRootIsDecorated(false);
    results_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    results_->header()->setStretchLastSection(true);
    results_->setMinimumWidth(280);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    classify_ = new QPushButton(tr("Classify"), this);
    classify_->setDefault(true);

    auto* imageRow = new QHBoxLayout;
    imageRow->addWidget(image_, 1);
    imageRow->addWidget(browse);
    auto* form = new QFormLayout;
    form->addRow(tr("Trained run"), run_);
    form->addRow(tr("Image"), imageRow);
    auto* body = new QHBoxLayout;
    body->addWidget(picture_, 0, Qt::AlignTop);
    body->addWidget(results_, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(classify_, QDialogButtonBox::ActionRole);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(body, 1);
    layout->addWidget(status_);
    layout->addWidget(buttons);

    if (run_->count() == 0)
        status_->setText(tr("No run here has a trained model yet: a run that finishes its epochs writes one."));
    connect(browse, &QPushButton::clicked, this, &ClassifyImageDialog::browseImage);
    connect(image_, &QLineEdit::editingFinished, this, [this] { setImage(image_->text().trimmed()); });
    connect(classify_, &QPushButton::clicked, this, &ClassifyImageDialog::classify);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(classifier_, &ImageClassifier::classified, this, &ClassifyImageDialog::showScores);
    connect(classifier_, &ImageClassifier::failed, this, &ClassifyImageDialog::showProblem);
    refreshButton();
    resize(620, 400);
}

int ClassifyImageDialog::runCount() const { return run_->count(); }

void ClassifyImageDialog::setImage(const QString& path) {
    image_->setText(path);
    QImageReader reader(path);
    const QImage image = reader.read();
    picture_->setPixmap(image.isNull() ? QPixmap()
                                       : QPixmap::fromImage(image.scaled(pictureSide, pictureSide, Qt::KeepAspectRatio,
                                                                         Qt::SmoothTransformation)));
    picture_->setText(image.isNull() && !path.isEmpty() ? tr("Cannot show\nthis file") : QString());
    results_->clear();
    scores_.clear();
    status_->clear();
    refreshButton();
}

void ClassifyImageDialog::browseImage() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Image to classify"), image_->text(),
                                                      tr("Images (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm *.tif *.tiff "
                                                         "*.webp);;All files (*)"));
    if (!path.isEmpty()) setImage(path);
}

void ClassifyImageDialog::classify() {
    if (run_->currentIndex() < 0 || image_->text().trimmed().isEmpty()) return;
    results_->clear();
    status_->setText(tr("Classifying %1 with %2…").arg(QFileInfo(image_->text()).fileName(), run_->currentText()));
    classify_->setEnabled(false);
    classifier_->classify(run_->currentData().toString(), image_->text().trimmed(), classesShown);
}

void ClassifyImageDialog::showScores(const QList<ClassScore>& scores) {
    scores_ = scores;
    results_->clear();
    status_->setPalette(palette());
    for (const ClassScore& score : scores) {
        auto* item = new QTreeWidgetItem(results_, {score.className});
        auto* bar = new QProgressBar(results_);
        bar->setRange(0, 1000);
        bar->setValue(int(score.probability * 1000));
        bar->setFormat(QString::number(score.probability * 100, 'f', 1) + '%');
        results_->setItemWidget(item, 1, bar);
    }
    status_->setText(scores.isEmpty() ? QString()
                                      : tr("Most likely: %1 (%2%)")
                                            .arg(scores.first().className,
                                                 QString::number(scores.first().probability * 100, 'f', 1)));
    refreshButton();
}

void ClassifyImageDialog::showProblem(const QString& reason) {
    QPalette colors = status_->palette();
    colors.setColor(QPalette::WindowText, problemColor(palette()));
    status_->setPalette(colors);
    status_->setText(tr("Could not classify the image: %1").arg(reason));
    refreshButton();
}

void ClassifyImageDialog::refreshButton() {
    classify_->setEnabled(run_->count() > 0 && !image_->text().trimmed().isEmpty() && !classifier_->isRunning());
}

}  // namespace cnnstudio::ui
