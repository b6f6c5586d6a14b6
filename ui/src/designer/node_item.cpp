#include "cnnstudio/ui/designer/node_item.h"

#include <algorithm>

#include <QApplication>
#include <QGraphicsScene>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>
#include <QWidget>

#include "cnnstudio/layer_types.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/designer/auto_layout.h"
#include "cnnstudio/ui/designer/edge_item.h"
#include "cnnstudio/ui/designer/port_item.h"
#include "common/layer_colors.h"
#include "designer/tool_tips.h"

namespace cnnstudio::ui {
namespace {

constexpr double cornerRadius = 8.0;
constexpr double stripeWidth = 6.0;
constexpr double overviewLabelGap = 10.0;
// The card's name is never drawn smaller on screen than this, in pixels (a small label's size);
// nor, grown to reach it, taller than this in scene units, which leaves room for the shape.
constexpr double minimumTitlePixels = 10.0;
constexpr double maximumCompactTitleHeight = 34.0;

QRectF cardRect() { return QRectF(0, 0, NodeMetrics::width, NodeMetrics::height); }

}  // namespace

// The name and output shape beside a card in overview, at the same size on screen at any zoom.
class OverviewLabel : public QGraphicsItem {
public:
    explicit OverviewLabel(QGraphicsItem* parent) : QGraphicsItem(parent) {
        setFlag(ItemIgnoresTransformations);
        setAcceptedMouseButtons(Qt::NoButton);
        setVisible(false);
    }

    void setText(const QString& text) {
        prepareGeometryChange();
        text_ = text;
    }

    QRectF boundingRect() const override {
        const QFontMetricsF metrics(QApplication::font());
        return QRectF(0, -metrics.height() / 2 - 2, metrics.horizontalAdvance(text_) + 8, metrics.height() + 4);
    }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget* widget) override {
        const QPalette palette = widget ? widget->palette() : QApplication::palette();
        QColor backdrop = palette.color(QPalette::Base);
        backdrop.setAlphaF(0.8f);
        painter->fillRect(boundingRect(), backdrop);
        painter->setFont(QApplication::font());
        painter->setPen(palette.color(QPalette::Text));
        painter->drawText(boundingRect().adjusted(4, 0, -4, 0), Qt::AlignLeft | Qt::AlignVCenter, text_);
    }

private:
    QString text_;
};

NodeItem::NodeItem(const QString& name, const QString& layerType)
    : name_(name), layerType_(layerType) {
    const LayerTypeInfo* info = findLayerType(layerType.toStdString());
    category_ = info ? QString::fromStdString(info->category) : QString();
    if (!info || info->maxInputs != 0) {
        inputPort_ = new PortItem(PortItem::Kind::Input, this);
        inputPort_->setPos(NodeMetrics::width / 2, 0);
    }
    outputPort_ = new PortItem(PortItem::Kind::Output, this);
    outputPort_->setPos(NodeMetrics::width / 2, NodeMetrics::height);
    overviewLabel_ = new OverviewLabel(this);
    overviewLabel_->setPos(NodeMetrics::width + overviewLabelGap, NodeMetrics::height / 2);
    overviewLabel_->setText(name_);
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
    setAcceptHoverEvents(true);
    setToolTip(wrappedToolTip(QString::fromStdString(info ? info->help : "unknown layer type " + layerType.toStdString())));
}

QRectF NodeItem::boundingRect() const { return cardRect().adjusted(-3, -3, 3, 3); }

QPainterPath NodeItem::shape() const {
    QPainterPath path;
    path.addRoundedRect(cardRect(), cornerRadius, cornerRadius);
    return path;
}

void NodeItem::setName(const QString& name) {
    name_ = name;
    refreshOverviewLabel();
    if (inputPort_) inputPort_->refreshToolTip();
    outputPort_->refreshToolTip();
    update();
}

void NodeItem::setAnalysis(const NodeInfo* info, const QString& problem) {
    problem_ = problem;
    if (info && problem.isEmpty() && info->outputShape.countPerImage() > 0) {
        shapeLine_ = QStringLiteral("→ %1").arg(formatShape(info->outputShape));
        costLine_ = QObject::tr("%1 params · %2").arg(formatCount(info->parameters), formatFlops(info->forwardFlops));
    } else if (!problem.isEmpty()) {
        shapeLine_ = QStringLiteral("⚠ ") + problem;
        costLine_.clear();
    } else {
        shapeLine_ = QObject::tr("→ ? (an input is broken)");
        costLine_.clear();
    }
    const LayerTypeInfo* type = findLayerType(layerType_.toStdString());
    const QString help = type ? QString::fromStdString(type->help) : QString();
    setToolTip(wrappedToolTip(problem.isEmpty() ? help : QObject::tr("%1: %2").arg(name_, problem)));
    refreshOverviewLabel();
    update();
}

bool NodeItem::overviewLabelsFitAt(double zoom) {
    const double rowPitchPixels = (NodeMetrics::height + NodeMetrics::verticalGap) * zoom;
    return rowPitchPixels >= QFontMetricsF(QApplication::font()).height();
}

void NodeItem::setOverview(bool overview) { overviewLabel_->setVisible(overview); }

bool NodeItem::isOverview() const { return overviewLabel_->isVisible(); }

QRectF NodeItem::overviewLabelSceneRect(double zoom) const {
    const QRectF pixels = overviewLabel_->boundingRect();
    return QRectF(mapToScene(overviewLabel_->pos()) + pixels.topLeft() / zoom, pixels.size() / zoom);
}

void NodeItem::refreshOverviewLabel() {
    overviewLabel_->setText(shapeLine_.isEmpty() ? name_ : name_ + "  " + shapeLine_);
}

QString NodeItem::annotationText() const {
    return costLine_.isEmpty() ? shapeLine_ : shapeLine_ + QLatin1Char('\n') + costLine_;
}

QPointF NodeItem::inputPortScenePos(int slot, int slotCount) const {
    const double spread = 18.0;
    const double offset = (slot - (slotCount - 1) / 2.0) * spread;
    return mapToScene(QPointF(NodeMetrics::width / 2 + offset, 0));
}

QPointF NodeItem::outputPortScenePos() const {
    return mapToScene(QPointF(NodeMetrics::width / 2, NodeMetrics::height));
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
    const QPalette palette = widget ? widget->palette() : QApplication::palette();
    const bool selected = option->state & QStyle::State_Selected;
    const bool broken = !problem_.isEmpty();
    const QColor accent = layerCategoryColor(category_);
    const QColor base = palette.color(QPalette::Base);
    const QColor errorColor = problemColor(palette);

    painter->setRenderHint(QPainter::Antialiasing);
    QPainterPath card;
    card.addRoundedRect(cardRect(), cornerRadius, cornerRadius);
    QColor fill = broken ? blend(base, errorColor, 0.16) : base;
    painter->fillPath(card, fill);

    // The category stripe on the left, clipped to the card's rounded corners.
    painter->save();
    painter->setClipPath(card);
    painter->fillRect(QRectF(0, 0, stripeWidth, NodeMetrics::height), accent);
    painter->restore();

    QPen border(selected ? palette.color(QPalette::Highlight) : broken ? errorColor : palette.color(QPalette::Mid));
    border.setWidthF(selected || broken ? 2.4 : 1.2);
    painter->setPen(border);
    painter->drawPath(card);

    // Zoomed far out the lines would be specks; the overview label beside the card says it all.
    const double zoom = option->levelOfDetailFromTransform(painter->worldTransform());
    if (zoom < overviewBelowScale) return;
    QFont titleFont = painter->font();
    titleFont.setBold(true);
    // Zoomed out, the name and shape grow on the card so that they stay as large on screen as a
    // small label, and the costs line gives them its room: a fitted long network stays readable.
    const double grow = std::clamp(minimumTitlePixels / (QFontMetricsF(titleFont).height() * zoom), 1.0,
                                   maximumCompactTitleHeight / QFontMetricsF(titleFont).height());
    titleFont.setPointSizeF(titleFont.pointSizeF() * grow);
    const bool compact = grow > 1.0;
    paintText(painter, palette, titleFont, compact);
}

void NodeItem::paintText(QPainter* painter, const QPalette& palette, const QFont& titleFont, bool compact) const {
    const bool broken = !problem_.isEmpty();
    const QColor text = palette.color(QPalette::Text);
    const double left = stripeWidth + 8, right = NodeMetrics::width - 8;
    // Three rows of 22 scene units, or, compact, two rows that share the card's height.
    const double rowHeight = compact ? (NodeMetrics::height - 12) / 2 : 22;
    const double shapeTop = compact ? 6 + rowHeight : 31;
    painter->setFont(titleFont);
    painter->setPen(text);
    const QFontMetricsF titleMetrics(titleFont);
    QFont typeFont = titleFont;
    typeFont.setBold(false);
    typeFont.setPointSizeF(titleFont.pointSizeF() * 0.9);
    const QFontMetricsF typeMetrics(typeFont);
    // The type gives way to the name where both do not fit (the stripe's colour still tells the
    // category, and the tooltip the type).
    const double typeWidth = typeMetrics.horizontalAdvance(layerType_);
    const bool typeFits = !compact || titleMetrics.horizontalAdvance(name_) + 8 + typeWidth <= right - left;
    const QRectF titleRect(left, 6, right - left - (typeFits ? typeWidth + 8 : 0), rowHeight);
    painter->drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter,
                      titleMetrics.elidedText(name_, Qt::ElideRight, titleRect.width()));
    if (typeFits) {
        painter->setFont(typeFont);
        painter->setPen(palette.color(QPalette::PlaceholderText));
        painter->drawText(QRectF(right - typeWidth, 6, typeWidth, rowHeight), Qt::AlignRight | Qt::AlignVCenter, layerType_);
    }

    QFont bodyFont = typeFont;
    bodyFont.setPointSizeF(titleFont.pointSizeF() * 0.95);
    painter->setFont(bodyFont);
    const QFontMetricsF bodyMetrics(bodyFont);
    painter->setPen(broken ? blend(text, problemColor(palette), 0.55) : text);
    const QRectF shapeRect(left, shapeTop, right - left, rowHeight);
    painter->drawText(shapeRect, Qt::AlignLeft | Qt::AlignVCenter,
                      bodyMetrics.elidedText(shapeLine_, Qt::ElideRight, shapeRect.width()));
    if (compact) return;
    painter->setPen(palette.color(QPalette::PlaceholderText));
    const QRectF costRect(left, 54, right - left, 22);
    painter->drawText(costRect, Qt::AlignLeft | Qt::AlignVCenter,
                      bodyMetrics.elidedText(costLine_, Qt::ElideRight, costRect.width()));
}

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
    if (change == ItemPositionChange) rectBeforeMove_ = sceneBoundingRect();
    // Not only this card's edges: one that went around the card may now go straight, and one
    // the card now stands on goes around it. Both lie over where the card was or is; the rest
    // are left alone, or dragging many cards at once would redraw every edge for each of them.
    if (change == ItemPositionHasChanged && scene()) {
        const QRectF swept = rectBeforeMove_.united(sceneBoundingRect());
        for (QGraphicsItem* item : scene()->items())
            if (auto* edge = qgraphicsitem_cast<EdgeItem*>(item);
                edge && (edges_.contains(edge) || edge->sceneBoundingRect().intersects(swept)))
                edge->updatePath();
    }
    return QGraphicsItem::itemChange(change, value);
}

}  // namespace cnnstudio::ui
