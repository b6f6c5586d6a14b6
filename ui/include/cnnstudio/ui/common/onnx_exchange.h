// OnnxExchange: a trained model out to ONNX, or an ONNX model in as a model folder, done by the
// worker (`cnnstudio-train export MODEL --onnx FILE`, `cnnstudio-train import FILE --out DIR`)
// in its own process, never on the GUI thread (docs/interchange.md says what each writes). No
// widgets: MainWindow's File menu drives one, and so can tests.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace cnnstudio::ui {

class OnnxExchange : public QObject {
    Q_OBJECT

public:
    explicit OnnxExchange(const QString& workerProgram, QObject* parent = nullptr);
    ~OnnxExchange() override;  // ends a worker still running

    bool isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }
    // `model`: a run folder or its model/ folder.
    void exportModel(const QString& model, const QString& onnxFile);
    void importModel(const QString& onnxFile, const QString& modelFolder);

signals:
    // `written`: the ONNX file, or the model folder (its spec.json opens in the designer).
    void finished(const QString& written);
    void failed(const QString& reason);

private:
    void run(const QStringList& arguments, const QString& written);
    void handleExit(int exitCode, QProcess::ExitStatus status);

    QString workerProgram_;
    QString written_;
    QProcess* process_ = nullptr;
};

}  // namespace cnnstudio::ui
