#include "cnnstudio/ui/training/network_fit_notice.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>

#include "common/layer_colors.h"

namespace cnnstudio::ui {

NetworkFitNotice::NetworkFitNotice(QWidget* parent) : QFrame(parent) {
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    icon_ = new QLabel(this);
    icon_->setAlignment(Qt::AlignTop);
    text_ = new QLabel(this);
    text_->setObjectName("networkFitText");
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(icon_);
    layout->addWidget(text_, 1);
    hide();
}

void NetworkFitNotice::showFit(const NetworkFit& fit, const QString& networkName) {
    refusing_ = !fit.canTrain() || !fit.memoryRefusal.isEmpty();
    const int iconSide = style()->pixelMetric(QStyle::PM_SmallIconSize);
    icon_->setPixmap(style()
                         ->standardIcon(refusing_ ? QStyle::SP_MessageBoxCritical : QStyle::SP_MessageBoxWarning)
                         .pixmap(iconSide, iconSide));
    if (!fit.canTrain()) {
        text_->setText(tr("<b>%1 cannot train on this data set</b><br>%2")
                           .arg(networkName.toHtmlEscaped(), fit.refusal.toHtmlEscaped()));
    } else if (refusing_) {
        text_->setText(tr("<b>The batch does not fit in memory</b><br>%1").arg(fit.memoryRefusal.toHtmlEscaped()));
    } else if (fit.adapted()) {
        QString lines;
        for (const QString& change : fit.changes) lines += QStringLiteral("<br>• ") + change.toHtmlEscaped();
        text_->setText(tr("<b>%1 will be adapted to %2</b>%3<br>The run trains this adapted copy; the design "
                          "itself stays as drawn.")
                           .arg(networkName.toHtmlEscaped(), fit.datasetName.toHtmlEscaped(), lines));
    }
    applyColors();
    setVisible(refusing_ || fit.adapted());
}

QString NetworkFitNotice::text() const { return text_->text(); }

void NetworkFitNotice::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) applyColors();
    QFrame::changeEvent(event);
}

void NetworkFitNotice::applyColors() {
    // A tinted box: red when the run is refused, amber when the network is changed for it.
    const QPalette base = parentWidget() ? parentWidget()->palette() : QPalette();
    const QColor accent = refusing_ ? problemColor(base) : QColor(230, 160, 20);
    QPalette colors = palette();
    colors.setColor(QPalette::Window, blend(base.color(QPalette::Window), accent, 0.18));
    setPalette(colors);
}

}  // namespace cnnstudio::ui
