// Runs one GUI test class (or all of them) under QTest. Settings go to a throw-away folder so the
// tests never read or write the user's.
#include <cstdio>
#include <memory>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <QWidget>

#include "cnnstudio/safetensors.h"
#include "gui_tests.h"

namespace cnnstudio::ui::tests {

std::map<std::string, std::function<QObject*()>>& testClasses() {
    static std::map<std::string, std::function<QObject*()>> classes;
    return classes;
}

QString testDataPath(const QString& relative) { return QDir(CNNSTUDIO_GUI_TEST_DATA).filePath(relative); }

cnnstudio::ui::DatasetSummary fashionMnistShape() {
    cnnstudio::ui::DatasetSummary summary;
    summary.description = "Fashion-MNIST";
    summary.channels = 1;
    summary.height = summary.width = 28;
    for (int i = 0; i < 10; ++i) summary.classNames << QString("class %1").arg(i);
    return summary;
}

bool writeCheckpoint(const QString& folder) {
    if (!QDir().mkpath(folder)) return false;
    QFile progress(folder + "/progress.json");
    if (!progress.open(QIODevice::WriteOnly) || progress.write("{}") != 2) return false;
    cnnstudio::writeSafetensors((folder + "/weights.safetensors").toStdString(), {{"conv.weight", {2}, {1.0f, 2.0f}}});
    return true;
}

void wheelOneNotchDownOn(QWidget* field) {
    const QPointF centre = QRectF(field->rect()).center();
    QWheelEvent wheel(centre, field->mapToGlobal(centre), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(field, &wheel);
}

}  // namespace cnnstudio::ui::tests

int main(int argc, char** argv) {
    QApplication application(argc, argv);
    QApplication::setOrganizationName("CNNStudioTests");
    QApplication::setApplicationName("gui_tests");
    QTemporaryDir settingsFolder;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsFolder.path());

    auto& classes = cnnstudio::ui::tests::testClasses();
    QStringList arguments = QApplication::arguments();
    std::string only;
    if (arguments.size() > 1 && !arguments[1].startsWith('-')) {
        only = arguments[1].toStdString();
        arguments.removeAt(1);
        if (!classes.count(only)) {
            std::fprintf(stderr, "gui_tests: no test class %s; the classes are:\n", only.c_str());
            for (const auto& [name, make] : classes) std::fprintf(stderr, "  %s\n", name.c_str());
            return 2;
        }
    }
    int failures = 0;
    for (const auto& [name, make] : classes) {
        if (!only.empty() && name != only) continue;
        std::unique_ptr<QObject> test(make());
        failures += QTest::qExec(test.get(), arguments);
    }
    return failures == 0 ? 0 : 1;
}
