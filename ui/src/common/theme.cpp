#include "cnnstudio/ui/common/theme.h"

#include <QApplication>
#include <QPainter>
#include <QProxyStyle>
#include <QStyle>
#include <QStyleOption>

#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

// Fusion outlines check box and radio button indicators in the window colour darkened, which on
// the dark palette is as dark as the indicator's fill: an unticked box could not be seen (1.2:1
// against the window). On a dark palette this outlines them again, halfway from the window
// colour to the text colour (3.3:1, the contrast WCAG asks of a control's edge).
class VisibleIndicatorStyle : public QProxyStyle {
public:
    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        if ((element != PE_IndicatorCheckBox && element != PE_IndicatorRadioButton) || !isDarkPalette(option->palette))
            return;
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, element == PE_IndicatorRadioButton);
        painter->setPen(blend(option->palette.color(QPalette::Window), option->palette.color(QPalette::WindowText), 0.45));
        painter->setBrush(Qt::NoBrush);
        const QRect edge = option->rect.adjusted(0, 0, -1, -1);
        if (element == PE_IndicatorRadioButton) painter->drawEllipse(edge);
        else painter->drawRect(edge);
        painter->restore();
    }
};

}  // namespace

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

void applyTheme(Theme theme) {
    if (!dynamic_cast<VisibleIndicatorStyle*>(QApplication::style())) QApplication::setStyle(new VisibleIndicatorStyle);
    QApplication::setPalette(theme == Theme::Dark ? darkPalette() : lightPalette());
}

QString themeName(Theme theme) { return theme == Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light"); }

Theme themeFromName(const QString& name) { return name == QLatin1String("dark") ? Theme::Dark : Theme::Light; }

}  // namespace cnnstudio::ui
