// cnnstudio: the desktop app. `cnnstudio [FILE]` opens a network spec (else the fer-cnn preset);
// `--screenshot DIR` renders each main view to PNG and exits (docs/screenshots/, under xvfb-run);
// `--hardware-report FILE` (repeatable) shows benchmark reports on the Hardware page.
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>

#include "cnnstudio/error.h"
#include "cnnstudio/ui/main_window.h"
#include "cnnstudio/ui/screenshot_tour.h"

int main(int argc, char** argv) {
    // Parsed before the QApplication exists, so --version and --help work without a display.
    QStringList arguments;
    for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
    QCommandLineParser parser;
    parser.setApplicationDescription("CNN Studio: design convolutional networks, train them and watch them learn.");
    const QCommandLineOption helpOption({"h", "help"}, "Show this help.");
    parser.addOption(helpOption);
    const QCommandLineOption versionOption = parser.addVersionOption();
    const QCommandLineOption screenshotOption(
        "screenshot", "Render each main view to PNG files in DIR (light and dark palettes), then exit.", "DIR");
    const QCommandLineOption runsRootOption("runs-root", "Read and write training runs under DIR for this session.",
                                            "DIR");
    const QCommandLineOption hardwareReportOption(
        "hardware-report", "Show this benchmark report on the Hardware page; repeat it to overlay more machines.",
        "FILE");
    parser.addOption(screenshotOption);
    parser.addOption(runsRootOption);
    parser.addOption(hardwareReportOption);
    parser.addPositionalArgument("file", "A network spec (JSON) to open instead of the fer-cnn preset.", "[file]");
    if (!parser.parse(arguments)) {
        std::fprintf(stderr, "cnnstudio: %s (see cnnstudio --help)\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(versionOption)) {
        std::printf("cnnstudio %s\n", CNNSTUDIO_VERSION);
        return 0;
    }
    if (parser.isSet(helpOption)) {
        std::printf("%s", qPrintable(parser.helpText().replace("<executable_name>", "cnnstudio")));
        return 0;
    }

    QApplication application(argc, argv);
    QApplication::setOrganizationName("CNNStudio");
    QApplication::setApplicationName("cnnstudio");
    QApplication::setApplicationDisplayName("CNN Studio");
    QApplication::setApplicationVersion(CNNSTUDIO_VERSION);
    QApplication::setDesktopFileName("cnnstudio");

    cnnstudio::ui::MainWindowOptions options;
    if (!parser.positionalArguments().isEmpty()) options.openFile = parser.positionalArguments().first();
    if (parser.isSet(runsRootOption)) options.runsRoot = QDir(parser.value(runsRootOption)).absolutePath();
    options.hardwareReports = parser.values(hardwareReportOption);
    const bool screenshots = parser.isSet(screenshotOption);
    options.persistSettings = !screenshots;  // a screenshot run leaves the user's settings alone
    cnnstudio::ui::MainWindow window(options);

    if (screenshots) {
        try {
            for (const QString& file : cnnstudio::ui::saveScreenshots(window, parser.value(screenshotOption)))
                std::printf("%s\n", qPrintable(file));
            return 0;
        } catch (const cnnstudio::Error& error) {
            std::fprintf(stderr, "cnnstudio: %s\n", error.what());
            return 1;
        }
    }
    window.show();
    return QApplication::exec();
}
