#include "cnnstudio/ui/training/dataset_picker.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

#include "cnnstudio/datasets/dataset_spec.h"
#include "cnnstudio/error.h"

namespace cnnstudio::ui {
namespace {

// The combo's data: the spec prefix ("" for the built-in set), and what the source needs.
struct Kind {
    const char* prefix;
    const char* label;
    bool folder;
    const char* hint;
};
const Kind kinds[] = {
    {"fashion-mnist", QT_TRANSLATE_NOOP("DatasetPicker", "Fashion-MNIST (built in)"), false,
     QT_TRANSLATE_NOOP("DatasetPicker", "Installed with CNN Studio: 28×28 grey pictures of clothing in 10 classes, "
                                        "60,000 for training and 10,000 for testing.")},
    {"fer2013", QT_TRANSLATE_NOOP("DatasetPicker", "FER2013 faces (CSV file)"), false,
     QT_TRANSLATE_NOOP("DatasetPicker",
                       "48×48 grey faces in 7 emotions. Not shipped with CNN Studio: download <i>fer2013.csv</i> "
                       "from Kaggle's <a href=\"https://www.kaggle.com/c/challenges-in-representation-learning-"
                       "facial-expression-recognition-challenge/data\">Facial Expression Recognition Challenge</a> "
                       "(a free Kaggle account) and choose the file, plain or gzipped.")},
    {"idx", QT_TRANSLATE_NOOP("DatasetPicker", "IDX folder (MNIST style)"), true,
     QT_TRANSLATE_NOOP("DatasetPicker", "A folder holding train-images-idx3-ubyte, train-labels-idx1-ubyte and the "
                                        "t10k- pair for testing, each plain or gzipped.")},
    {"folder", QT_TRANSLATE_NOOP("DatasetPicker", "Image folder (one sub-folder per class)"), true,
     QT_TRANSLATE_NOOP("DatasetPicker", "One sub-folder of images per class, named after it (or train/, val/ and "
                                        "test/ folders of those). Images are resized to the network's input.")},
};

}  // namespace

DatasetPicker::DatasetPicker(QWidget* parent) : QWidget(parent) {
    kind_ = new QComboBox(this);
    kind_->setObjectName("datasetKind");
    for (const Kind& kind : kinds) kind_->addItem(tr(kind.label), QString::fromLatin1(kind.prefix));
    path_ = new QLineEdit(this);
    path_->setObjectName("datasetPath");
    browse_ = new QPushButton(tr("Browse…"), this);
    sourceHint_ = new QLabel(this);
    sourceHint_->setObjectName("datasetSourceHint");
    sourceHint_->setWordWrap(true);
    sourceHint_->setOpenExternalLinks(true);
    sourceHint_->setTextFormat(Qt::RichText);
    preview_ = new DatasetPreview(this);
    preview_->setObjectName("datasetPreview");
    splitNote_ = new QLabel(this);
    splitNote_->setObjectName("datasetSplitNote");
    splitNote_->setWordWrap(true);
    splitNote_->setForegroundRole(QPalette::PlaceholderText);
    splitNote_->hide();

    auto* pathRow = new QWidget(this);
    auto* pathLayout = new QHBoxLayout(pathRow);
    pathLayout->setContentsMargins(0, 0, 0, 0);
    pathLayout->addWidget(path_, 1);
    pathLayout->addWidget(browse_);

    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("Source"), kind_);
    form->addRow(tr("Location"), pathRow);
    form->addRow(sourceHint_);
    form->addRow(preview_);
    form->addRow(splitNote_);

    connect(kind_, &QComboBox::currentIndexChanged, this, [this] {
        updatePathRow();
        emit changed();
        refreshPreview();
    });
    connect(path_, &QLineEdit::textEdited, this, [this] { emit changed(); });
    connect(path_, &QLineEdit::editingFinished, this, &DatasetPicker::refreshPreview);
    connect(browse_, &QPushButton::clicked, this, &DatasetPicker::browse);
    connect(&loader_, &QFutureWatcher<PreviewResult>::finished, this, [this] {
        const PreviewResult result = loader_.result();
        if (result.request == wantedPreview()) {
            shown_ = result.request;
            if (result.error.isEmpty()) preview_->showSummary(result.summary);
            else preview_->showMessage(result.error);
            splitNote_->setText(tr("Counted for seed %1 (Training tab): where the data set has no validation images "
                                   "of its own, the seed picks the training images held out for validation.")
                                    .arg(result.request.validationSeed));
            splitNote_->setVisible(result.error.isEmpty());
            emit previewUpdated();
        }
        if (refreshPending_) {
            refreshPending_ = false;
            refreshPreview();
        }
    });
    updatePathRow();
}

QString DatasetPicker::datasetSpec() const {
    const QString prefix = kind_->currentData().toString();
    if (prefix == "fashion-mnist") return prefix;
    return prefix + ':' + path_->text().trimmed();
}

void DatasetPicker::setDatasetSpec(const QString& spec) {
    const qsizetype colon = spec.indexOf(':');
    const QString prefix = colon < 0 ? spec : spec.left(colon);
    const int row = kind_->findData(prefix);
    {
        QSignalBlocker blockKind(kind_);
        kind_->setCurrentIndex(row < 0 ? 0 : row);
        path_->setText(colon < 0 ? QString() : spec.mid(colon + 1));
    }
    updatePathRow();
    emit changed();
    refreshPreview();
}

void DatasetPicker::setValidationSeed(std::uint64_t seed) {
    if (seed == validationSeed_) return;
    validationSeed_ = seed;
    refreshPreview();
}

void DatasetPicker::setSkipUnreadable(bool skip) {
    if (skip == skipUnreadable_) return;
    skipUnreadable_ = skip;
    refreshPreview();
}

DatasetPicker::PreviewRequest DatasetPicker::wantedPreview() const {
    return {datasetSpec(), validationSeed_, skipUnreadable_};
}

void DatasetPicker::updatePathRow() {
    sourceHint_->setText(tr(kinds[kind_->currentIndex()].hint));
    const bool needsPath = kind_->currentData().toString() != "fashion-mnist";
    path_->setEnabled(needsPath);
    browse_->setEnabled(needsPath);
    path_->setPlaceholderText(needsPath ? (kinds[kind_->currentIndex()].folder ? tr("a folder") : tr("a .csv file"))
                                        : tr("installed with CNN Studio"));
}

void DatasetPicker::browse() {
    const bool folder = kinds[kind_->currentIndex()].folder;
    const QString chosen =
        folder ? QFileDialog::getExistingDirectory(this, tr("Data set folder"), path_->text())
               : QFileDialog::getOpenFileName(this, tr("The FER2013 file (fer2013.csv)"), path_->text(),
                                              tr("FER2013 CSV files (*.csv *.csv.gz);;All files (*)"));
    if (chosen.isEmpty()) return;
    path_->setText(chosen);
    emit changed();
    refreshPreview();
}

void DatasetPicker::refreshPreview() {
    const PreviewRequest request = wantedPreview();
    if (request == shown_) return;
    if (request.spec.endsWith(':')) {
        shown_.reset();
        splitNote_->hide();
        preview_->showMessage(kinds[kind_->currentIndex()].folder ? tr("Choose the data set's folder above.")
                                                                   : tr("Choose the data set's file above."));
        emit previewUpdated();
        return;
    }
    if (loader_.isRunning()) {
        refreshPending_ = true;  // one load at a time; the newest choice goes next
        return;
    }
    const QString location = path_->text().trimmed();
    preview_->showMessage(tr("Reading %1…").arg(location.isEmpty() ? kind_->currentText() : QFileInfo(location).fileName()));
    loader_.setFuture(QtConcurrent::run([request, location]() -> PreviewResult {
        datasets::LoadOptions options;
        options.seed = request.validationSeed;  // as the worker holds out the validation set
        options.skipBad = request.skipUnreadable;
        try {
            return {request, DatasetSummary::fromSplits(datasets::loadDataset(request.spec.toStdString(), options)), {}};
        } catch (const datasets::UnreadableInputError& error) {
            // The app's switch in place of the command line's --skip-bad.
            return {request, {},
                    tr("%1: %2 (%3, or tick “Skip unreadable images and rows” on the Training tab)")
                        .arg(QString::fromStdString(escapeControlBytes(error.where())),
                             QString::fromStdString(escapeControlBytes(error.reason())),
                             QString::fromStdString(error.fix()))};
        } catch (const Error& error) {
            return {request, {}, QString::fromStdString(error.what())};
        } catch (const std::exception& error) {
            return {request, {}, tr("Cannot read %1: %2").arg(location, QString::fromLocal8Bit(error.what()))};
        }
    }));
}

}  // namespace cnnstudio::ui
