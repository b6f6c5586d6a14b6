// ClassifyImageDialog: Run ▸ Classify an image — pick a trained run and an image file; the image
// is shown as the model will see it (its grey or colour, its size) beside the model's most likely
// classes with their probabilities. The ImageClassifier does the work in the worker process.
#pragma once

#include <QDialog>
#include <QList>

#include "cnnstudio/ui/history/image_classifier.h"
#include "cnnstudio/ui/history/run_catalogue.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;

namespace cnnstudio::ui {

class ClassifyImageDialog : public QDialog {
    Q_OBJECT

public:
    // `runs`: the runs to offer (those with a trained model are listed); `selected`: the one
    // chosen first, if it is among them.
    ClassifyImageDialog(const QList<RunRecord>& runs, const QString& selected, QWidget* parent = nullptr);

    ImageClassifier* classifier() const { return classifier_; }
    void setImage(const QString& path);
    int runCount() const;
    QList<ClassScore> shownScores() const { return scores_; }

public slots:
    void classify();

private:
    void browseImage();
    void showScores(const QList<ClassScore>& scores);
    void showProblem(const QString& reason);
    void refreshButton();

    ImageClassifier* classifier_;
    QComboBox* run_;
    QLineEdit* image_;
    QLabel* picture_;
    QTreeWidget* results_;
    QLabel* status_;
    QPushButton* classify_;
    QList<ClassScore> scores_;
};

}  // namespace cnnstudio::ui
