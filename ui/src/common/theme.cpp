#include "cnnstudio/ui/common/theme.h"

#include <QApplication>
#include <QStyle>

namespace cnnstudio::ui {

QPalette lightPalette() { return QApplication::style()->standardPalette(); }

QPalette darkPalette() {
    QPalette palette;
    const QColor window(45, 45, 48), base(30, 30, 32), text(230, 230, 230), disabled(128, 128, 128);
    palette.setColor(QPalette::Window, window);
    palette.setColor(QPalette::WindowText, text);
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::AlternateBase, QColor(40, 40, 43));
    palette.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
    palette.setColor(QPalette::ToolTipText, text);
    palette.setColor(QPalette::PlaceholderText, QColor(160, 160, 165));
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::Button, QColor(55, 55, 58));
    palette.setColor(QPalette::ButtonText, text);
    palette.setColor(QPalette::BrightText, QColor(255, 90, 90));
    palette.setColor(QPalette::Light, QColor(75, 75, 80));
    palette.setColor(QPalette::Midlight, QColor(62, 62, 66));
    palette.setColor(QPalette::Mid, QColor(85, 85, 90));
    palette.setColor(QPalette::Dark, QColor(25, 25, 27));
    palette.setColor(QPalette::Shadow, QColor(10, 10, 10));
    palette.setColor(QPalette::Highlight, QColor(42, 130, 218));
    palette.setColor(QPalette::HighlightedText, Qt::white);
    palette.setColor(QPalette::Link, QColor(90, 160, 255));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        palette.setColor(QPalette::Disabled, role, disabled);
    return palette;
}

void applyTheme(Theme theme) { QApplication::setPalette(theme == Theme::Dark ? darkPalette() : lightPalette()); }

QString themeName(Theme theme) { return theme == Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light"); }

Theme themeFromName(const QString& name) { return name == QLatin1String("dark") ? Theme::Dark : Theme::Light; }

}  // namespace cnnstudio::ui
