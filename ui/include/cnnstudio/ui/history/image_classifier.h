// ImageClassifier: the most likely classes of one image under a trained run's model, computed by
// the worker (`cnnstudio-train predict RUN_DIR IMAGE --top N`) in its own process, never on the
// GUI thread. It reads the worker's plain output ("  <class>  <percent>%" per line). No widgets:
// ClassifyImageDialog drives one, and so can tests.
#pragma once

#include <QList>
#include <QObject>
#include <QProcess>
#include <QString>

namespace cnnstudio::ui {

struct ClassScore {
    QString className;
    double probability = 0;  // 0..1
};

// The classes listed for the first image of `predict`'s output, most likely first.
QList<ClassScore> parsePredictOutput(const QString& output);
// A run folder whose model can classify: it finished training and wrote model/.
bool hasTrainedModel(const QString& runDirectory);

class ImageClassifier : public QObject {
    Q_OBJECT

public:
    explicit ImageClassifier(QObject* parent = nullptr);
    ~ImageClassifier() override;  // ends a worker still running

    void setWorkerProgram(const QString& program) { workerProgram_ = program; }
    bool isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }
    void classify(const QString& runDirectory, const QString& imagePath, int top = 5);

signals:
    void classified(const QList<cnnstudio::ui::ClassScore>& scores);
    void failed(const QString& reason);

private:
    void handleExit(int exitCode, QProcess::ExitStatus status);

    QString workerProgram_;
    QProcess* process_ = nullptr;
};

}  // namespace cnnstudio::ui
