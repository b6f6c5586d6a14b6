// Tooltips of the designer. Qt shows a plain-text tooltip on one line however long it is, so a
// layer's help ran off the screen; as rich text it wraps to a readable width.
#pragma once

#include <QString>

namespace cnnstudio::ui {

inline QString wrappedToolTip(const QString& text) {
    return text.isEmpty() ? text : QStringLiteral("<p>%1</p>").arg(text.toHtmlEscaped());
}

}  // namespace cnnstudio::ui
