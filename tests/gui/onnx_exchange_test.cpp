// OnnxExchange runs the real worker: a trained run out to ONNX and back into a model folder whose
// network the designer opens, and a file that is not ONNX refused with the worker's reason.
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "cnnstudio/run_folder.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/common/onnx_exchange.h"
#include "gui_tests.h"

using cnnstudio::ui::OnnxExchange;

class OnnxExchangeTest : public QObject {
    Q_OBJECT

    QString worker_ = QStringLiteral(CNNSTUDIO_WORKER_PATH);

    bool workerBuilt() const { return QFileInfo(worker_).isExecutable(); }

private slots:
    void aTrainedRunGoesOutToOnnxAndComesBackAsAModelFolder() {
        if (!workerBuilt()) QSKIP(qPrintable("cnnstudio-train is not built (looked for " + worker_ + ")"));
        QTemporaryDir folder;
        const QString run = folder.filePath("lenet5-run");
        QProcess training;
        training.start(worker_, {"--preset", "lenet5", "--epochs", "1", "--limit", "512", "--batch", "64",
                                 "--threads", "2", "--run-dir", run});
        QVERIFY(training.waitForFinished(300000));
        QCOMPARE(training.exitCode(), 0);

        OnnxExchange exchange(worker_);
        QSignalSpy finished(&exchange, &OnnxExchange::finished);
        QSignalSpy failed(&exchange, &OnnxExchange::failed);
        const QString onnx = folder.filePath("lenet5.onnx");
        exchange.exportModel(run, onnx);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 1, 120000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(finished.at(0).at(0).toString(), onnx);
        QVERIFY(QFileInfo(onnx).size() > 0);

        const QString imported = folder.filePath("lenet5-imported");
        exchange.importModel(onnx, imported);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 2, 120000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(finished.at(1).at(0).toString(), imported);
        const auto spec = cnnstudio::NetworkSpec::load(
            QDir(imported).filePath(cnnstudio::RunFolder::kSpecFileName).toStdString());
        QVERIFY(spec.nodes.size() > 5);  // the network the designer opens
    }

    void aFileThatIsNotOnnxIsRefusedWithTheWorkersReason() {
        if (!workerBuilt()) QSKIP(qPrintable("cnnstudio-train is not built (looked for " + worker_ + ")"));
        QTemporaryDir folder;
        const QString notOnnx = folder.filePath("notes.onnx");
        QFile file(notOnnx);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("these are my notes, not a model");
        file.close();
        OnnxExchange exchange(worker_);
        QSignalSpy failed(&exchange, &OnnxExchange::failed);
        exchange.importModel(notOnnx, folder.filePath("out"));
        QVERIFY(failed.wait(60000));
        const QString reason = failed.at(0).at(0).toString();
        QVERIFY2(reason.contains("notes.onnx"), qPrintable(reason));
        QVERIFY(!QFileInfo::exists(folder.filePath("out")));
    }
};

CNNSTUDIO_GUI_TEST(OnnxExchangeTest);

#include "onnx_exchange_test.moc"
