#include "cnnstudio/ui/designer/designer_canvas.h"

#include <algorithm>
#include <cmath>

#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QGraphicsLineItem>
#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneDragDropEvent>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsView>
#include <QImage>
#include <QKeyEvent>
#include <QMenu>
#include <QMimeData>
#include <QPainter>
#include <QSvgGenerator>

#include "cnnstudio/error.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/ui/designer/auto_layout.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/edge_item.h"
#include "cnnstudio/ui/designer/node_item.h"
#include "cnnstudio/ui/designer/port_item.h"

namespace cnnstudio::ui {
namespace {

constexpr double gridSpacing = 24.0;
constexpr double exportMargin = 24.0;
// Room around the drawing to pan into and drop new layers on.
constexpr double roomAroundDrawing = 1500.0;
const QRectF smallestSceneRect(-2000, -1000, 4000, 4000);

}  // namespace

DesignerCanvas::DesignerCanvas(DesignDocument* document, QObject* parent)
    : QGraphicsScene(parent), document_(document) {
    setSceneRect(smallestSceneRect);
    connect(document_, &DesignDocument::specChanged, this, &DesignerCanvas::growSceneRect);
    connect(document_, &DesignDocument::documentReset, this, &DesignerCanvas::rebuild);
    connect(document_, &DesignDocument::nodeAdded, this, &DesignerCanvas::addNodeWithEdges);
    connect(document_, &DesignDocument::nodeRemoved, this, &DesignerCanvas::removeNodeItem);
    connect(document_, &DesignDocument::nodeInputsChanged, this, &DesignerCanvas::rebuildInputEdges);
    connect(document_, &DesignDocument::nodeMoved, this, [this](const QString& name, QPointF position) {
        if (NodeItem* item = nodes_.value(name); item && item->pos() != position) item->setPos(position);
    });
    connect(document_, &DesignDocument::nodeRenamed, this, [this](const QString& from, const QString& to) {
        NodeItem* item = nodes_.take(from);
        if (!item) return;
        nodes_.insert(to, item);
        item->setName(to);
        for (EdgeItem* edge : item->edges()) edge->updatePath();
        if (lastSelected_ == from) {
            lastSelected_ = to;
            emit selectedNodeChanged(to);
        }
    });
    connect(document_, &DesignDocument::analysisChanged, this, &DesignerCanvas::refreshAnalysis);
    connect(this, &QGraphicsScene::selectionChanged, this, [this] {
        const QString selected = selectedNode();
        if (selected != lastSelected_) {
            lastSelected_ = selected;
            emit selectedNodeChanged(selected);
        }
    });
    rebuild();
}

DesignerCanvas::~DesignerCanvas() {
    // Deleting the items changes the selection; nobody should hear of it any more.
    blockSignals(true);
}

QList<EdgeItem*> DesignerCanvas::edgeItems() const {
    QList<EdgeItem*> edges;
    for (QGraphicsItem* item : items())
        if (auto* edge = qgraphicsitem_cast<EdgeItem*>(item)) edges.append(edge);
    return edges;
}

QStringList DesignerCanvas::selectedNodeNames() const {
    QStringList names;
    for (QGraphicsItem* item : selectedItems())
        if (auto* node = qgraphicsitem_cast<NodeItem*>(item)) names.append(node->name());
    return names;
}

QString DesignerCanvas::selectedNode() const {
    const QStringList names = selectedNodeNames();
    return names.size() == 1 ? names.first() : QString();
}

void DesignerCanvas::rebuild() {
    // clear() deletes every item, the connection being drawn included.
    pendingConnection_ = nullptr;
    connectionSource_ = nullptr;
    targetedPort_ = nullptr;
    insertType_.clear();
    setMode(Mode::Select);
    positionsAtPress_.clear();
    clear();
    nodes_.clear();
    for (const NodeSpec& node : document_->spec().nodes) addNodeItem(QString::fromStdString(node.name));
    for (const NodeSpec& node : document_->spec().nodes) rebuildInputEdges(QString::fromStdString(node.name));
    refreshAnalysis();
    growSceneRect();
}

void DesignerCanvas::growSceneRect() {
    // The scroll range must reach every node, or part of a long network cannot be shown.
    const QRectF wanted = smallestSceneRect.united(
        itemsBoundingRect().adjusted(-roomAroundDrawing, -roomAroundDrawing, roomAroundDrawing, roomAroundDrawing));
    if (!sceneRect().contains(wanted)) setSceneRect(sceneRect().united(wanted));
}

void DesignerCanvas::addNodeItem(const QString& name) {
    const NodeSpec* node = document_->spec().find(name.toStdString());
    if (!node || nodes_.contains(name)) return;
    auto* item = new NodeItem(name, QString::fromStdString(node->type));
    item->setPos(document_->position(name));
    item->setOverview(overview_);
    addItem(item);
    nodes_.insert(name, item);
    for (PortItem* port : {item->inputPort(), item->outputPort()}) {
        if (!port) continue;
        connect(port, &PortItem::connectionDragStarted, this, &DesignerCanvas::startConnection);
        connect(port, &PortItem::connectionDragMoved, this, &DesignerCanvas::followConnection);
        connect(port, &PortItem::connectionDragFinished, this, &DesignerCanvas::finishConnection);
    }
}

void DesignerCanvas::setOverview(bool overview) {
    overview_ = overview;
    for (NodeItem* node : std::as_const(nodes_)) node->setOverview(overview);
}

bool DesignerCanvas::overviewLabelsFitAt(double zoom) const {
    if (!NodeItem::overviewLabelsFitAt(zoom)) return false;
    for (NodeItem* node : std::as_const(nodes_))
        for (QGraphicsItem* item : items(node->overviewLabelSceneRect(zoom)))
            if (item != node && qgraphicsitem_cast<NodeItem*>(item)) return false;
    return true;
}

void DesignerCanvas::addNodeWithEdges(const QString& name) {
    addNodeItem(name);
    rebuildInputEdges(name);
    // Undo re-inserts deleted nodes one by one, consumers possibly before the nodes they read
    // from: the edges into those consumers could not be drawn then, so draw them now.
    const std::string added = name.toStdString();
    for (const NodeSpec& node : document_->spec().nodes)
        if (std::find(node.inputs.begin(), node.inputs.end(), added) != node.inputs.end())
            rebuildInputEdges(QString::fromStdString(node.name));
}

void DesignerCanvas::removeNodeItem(const QString& name) {
    NodeItem* item = nodes_.take(name);
    if (!item) return;
    if (connectionSource_ && connectionSource_->node() == item) cancelMode();
    if (targetedPort_ && targetedPort_->node() == item) targetedPort_ = nullptr;
    for (EdgeItem* edge : QList<EdgeItem*>(item->edges())) {
        (edge->source() == item ? edge->target() : edge->source())->removeEdge(edge);
        delete edge;
    }
    positionsAtPress_.remove(name);
    delete item;
}

void DesignerCanvas::rebuildInputEdges(const QString& name) {
    NodeItem* target = nodes_.value(name);
    const NodeSpec* node = document_->spec().find(name.toStdString());
    if (!target || !node) return;
    for (EdgeItem* edge : QList<EdgeItem*>(target->edges()))
        if (edge->target() == target) {
            edge->source()->removeEdge(edge);
            target->removeEdge(edge);
            delete edge;
        }
    const int slotCount = int(node->inputs.size());
    for (int slot = 0; slot < slotCount; ++slot) {
        NodeItem* source = nodes_.value(QString::fromStdString(node->inputs[std::size_t(slot)]));
        if (!source) continue;
        auto* edge = new EdgeItem(source, target);
        edge->setSlot(slot, slotCount);
        source->addEdge(edge);
        target->addEdge(edge);
        addItem(edge);
    }
}

void DesignerCanvas::refreshAnalysis() {
    const ShapeReport& report = document_->report();
    QHash<QString, QStringList> problems;
    for (const auto& [node, message] : report.problems)
        problems[QString::fromStdString(node)].append(QString::fromStdString(message));
    for (auto it = nodes_.cbegin(); it != nodes_.cend(); ++it)
        it.value()->setAnalysis(report.find(it.key().toStdString()), problems.value(it.key()).join("; "));
}

NodeItem* DesignerCanvas::nodeItemAt(QPointF scenePos, const NodeItem* except) const {
    for (QGraphicsItem* item : items(scenePos)) {
        auto* node = qgraphicsitem_cast<NodeItem*>(item);
        if (auto* port = qgraphicsitem_cast<PortItem*>(item)) node = port->node();
        if (node && node != except) return node;
    }
    return nullptr;
}

template <typename Edit>
void DesignerCanvas::tryEdit(Edit&& edit) {
    try {
        edit();
    } catch (const Error& error) {
        emit editRefused(QString::fromStdString(error.what()));
    }
}

void DesignerCanvas::selectNode(const QString& name) {
    NodeItem* item = nodes_.value(name);
    if (!item) return;
    clearSelection();
    item->setSelected(true);
    for (QGraphicsView* view : views()) view->ensureVisible(item, 40, 40);
}

void DesignerCanvas::deleteSelection() {
    QStringList nodes;
    QList<QPair<QString, QString>> edges;
    for (QGraphicsItem* item : selectedItems()) {
        if (auto* node = qgraphicsitem_cast<NodeItem*>(item)) nodes.append(node->name());
    }
    for (QGraphicsItem* item : selectedItems())
        if (auto* edge = qgraphicsitem_cast<EdgeItem*>(item))
            if (!nodes.contains(edge->source()->name()) && !nodes.contains(edge->target()->name()))
                edges.append({edge->source()->name(), edge->target()->name()});
    tryEdit([&] { document_->removeItems(nodes, edges); });
}

void DesignerCanvas::addNodeAt(const QString& type, QPointF scenePos) {
    tryEdit([&] {
        const QString name = document_->addNode(
            type, scenePos - QPointF(NodeMetrics::width / 2, NodeMetrics::height / 2));
        selectNode(name);
    });
}

void DesignerCanvas::addNodeBelowSelection(const QString& type) {
    const QString selected = selectedNode();
    QString anchor = selected;
    if (anchor.isEmpty() && !document_->spec().nodes.empty())
        anchor = QString::fromStdString(document_->spec().nodes.back().name);
    // Only an explicit selection is connected to, as Deep Network Designer does: the lowest node
    // is where the new one goes, not necessarily what should feed it.
    tryEdit([&] { selectNode(document_->addNode(type, document_->placeBelow(anchor), selected)); });
}

void DesignerCanvas::selectNodes(const QStringList& names) {
    clearSelection();
    for (const QString& name : names)
        if (NodeItem* item = nodes_.value(name)) item->setSelected(true);
    if (!names.isEmpty())
        if (NodeItem* first = nodes_.value(names.first()))
            for (QGraphicsView* view : views()) view->ensureVisible(first, 40, 40);
}

bool DesignerCanvas::canPaste() const {
    const QMimeData* data = QApplication::clipboard()->mimeData();
    return data && data->hasFormat(nodesMimeType);
}

void DesignerCanvas::copySelection() {
    const NetworkSpec fragment = document_->copyNodes(selectedNodeNames());
    if (fragment.nodes.empty()) {
        emit editRefused(tr("Select the layers to copy first (the Input is never copied)."));
        return;
    }
    auto* data = new QMimeData;
    const QByteArray json = QByteArray::fromStdString(fragment.toJson().dump(2));
    data->setData(nodesMimeType, json);
    data->setText(QString::fromUtf8(json));
    QApplication::clipboard()->setMimeData(data);
}

NetworkSpec DesignerCanvas::clipboardFragment() const {
    const QByteArray json = QApplication::clipboard()->mimeData()->data(nodesMimeType);
    const nlohmann::json document = nlohmann::json::parse(json.toStdString(), nullptr, false);
    if (document.is_discarded())
        throw Error("the clipboard holds no layers CNN Studio can read", "", "copy the layers again");
    return NetworkSpec::fromJson(document);
}

void DesignerCanvas::paste() {
    tryEdit([&] {
        if (!canPaste()) return;
        const NetworkSpec fragment = clipboardFragment();
        QRectF copiedFrom;
        for (const auto& [name, position] : fragment.layout)
            copiedFrom = copiedFrom.united(QRectF(QPointF(position.first, position.second),
                                                  QSizeF(NodeMetrics::width, NodeMetrics::height)));
        selectNodes(document_->pasteNodes(fragment, document_->freePlaceFor(copiedFrom)));
    });
}

void DesignerCanvas::pasteAt(QPointF scenePos) {
    tryEdit([&] {
        if (canPaste()) selectNodes(document_->pasteNodes(clipboardFragment(), scenePos));
    });
}

void DesignerCanvas::duplicateSelection() {
    tryEdit([&] {
        const QStringList copies = document_->duplicateNodes(selectedNodeNames());
        if (copies.isEmpty()) emit editRefused(tr("Select the layers to duplicate first (the Input is never copied)."));
        else selectNodes(copies);
    });
}

std::unique_ptr<QMenu> DesignerCanvas::contextMenuAt(QPointF scenePos) {
    auto menu = std::make_unique<QMenu>();
    if (NodeItem* node = nodeItemAt(scenePos)) {
        if (!node->isSelected()) selectNode(node->name());
        const QString name = node->name();
        const int count = int(selectedNodeNames().size());
        menu->addAction(tr("Duplicate"), this, &DesignerCanvas::duplicateSelection);
        menu->addAction(tr("Copy"), this, &DesignerCanvas::copySelection);
        if (count == 1) menu->addAction(tr("Rename %1…").arg(name), this, [this, name] { emit renameRequested(name); });
        menu->addSeparator();
        menu->addAction(count == 1 ? tr("Delete %1").arg(name) : tr("Delete %n layer(s)", nullptr, count), this,
                        &DesignerCanvas::deleteSelection);
        return menu;
    }
    QAction* paste = menu->addAction(tr("Paste here"), this, [this, scenePos] { pasteAt(scenePos); });
    paste->setEnabled(canPaste());
    addLayerMenu(menu->addMenu(tr("Add layer here")), scenePos);
    menu->addSeparator();
    menu->addAction(tr("Fit network"), this, &DesignerCanvas::fitRequested);
    return menu;
}

void DesignerCanvas::addLayerMenu(QMenu* menu, QPointF scenePos) {
    QHash<QString, QMenu*> categories;
    for (const LayerTypeInfo& info : layerTypes()) {
        const QString category = QString::fromStdString(info.category);
        QMenu*& submenu = categories[category];
        if (!submenu) submenu = menu->addMenu(category);
        const QString type = QString::fromStdString(info.type);
        submenu->addAction(type, this, [this, type, scenePos] { addNodeAt(type, scenePos); });
    }
}

void DesignerCanvas::contextMenuEvent(QGraphicsSceneContextMenuEvent* event) {
    if (mode_ != Mode::Select) cancelMode();
    std::unique_ptr<QMenu> menu = contextMenuAt(event->scenePos());
    menu->exec(event->screenPos());
    event->accept();
}

void DesignerCanvas::setMode(Mode mode) {
    if (mode_ == mode) return;
    mode_ = mode;
    const Qt::CursorShape cursor = mode == Mode::InsertNode ? Qt::CrossCursor
                                   : mode == Mode::Connect ? Qt::DragLinkCursor
                                                            : Qt::ArrowCursor;
    for (QGraphicsView* view : views()) view->viewport()->setCursor(cursor);
    emit modeChanged(mode);
}

void DesignerCanvas::startInserting(const QString& type) {
    insertType_ = type;
    setMode(Mode::InsertNode);
}

void DesignerCanvas::cancelMode() {
    if (pendingConnection_) {
        delete pendingConnection_;
        pendingConnection_ = nullptr;
        connectionSource_ = nullptr;
    }
    setTargetedPort(nullptr);
    insertType_.clear();
    setMode(Mode::Select);
}

void DesignerCanvas::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Escape && mode_ != Mode::Select) {
        cancelMode();
        event->accept();
        return;
    }
    QGraphicsScene::keyPressEvent(event);
}

void DesignerCanvas::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    if (mode_ == Mode::InsertNode) {
        if (event->button() == Qt::LeftButton) {
            const QString type = insertType_;
            cancelMode();
            addNodeAt(type, event->scenePos());
        } else {
            cancelMode();
        }
        event->accept();
        return;
    }
    QGraphicsScene::mousePressEvent(event);
    positionsAtPress_.clear();
    for (QGraphicsItem* item : selectedItems())
        if (auto* node = qgraphicsitem_cast<NodeItem*>(item)) positionsAtPress_.insert(node->name(), node->pos());
}

void DesignerCanvas::startConnection(PortItem* port, QPointF scenePos) {
    cancelMode();
    setMode(Mode::Connect);
    connectionSource_ = port;
    pendingConnection_ = new QGraphicsLineItem(QLineF(port->scenePos(), scenePos));
    pendingConnection_->setPen(QPen(palette().color(QPalette::Highlight), 2, Qt::DashLine));
    pendingConnection_->setZValue(10);
    addItem(pendingConnection_);
}

void DesignerCanvas::followConnection(PortItem* port, QPointF scenePos) {
    if (port != connectionSource_ || !pendingConnection_) return;
    QLineF line = pendingConnection_->line();
    line.setP2(scenePos);
    pendingConnection_->setLine(line);
    setTargetedPort(connectionEndAt(scenePos));
}

void DesignerCanvas::finishConnection(PortItem* port, QPointF scenePos) {
    if (port != connectionSource_ || !pendingConnection_) return;
    PortItem* end = connectionEndAt(scenePos);
    cancelMode();
    if (!end) return;
    // A drag from an output feeds the node it ends on; a drag from an input reads from it.
    const bool fromOutput = port->kind() == PortItem::Kind::Output;
    const QString from = (fromOutput ? port : end)->node()->name();
    const QString to = (fromOutput ? end : port)->node()->name();
    tryEdit([&] { document_->connectNodes(from, to); });
}

PortItem* DesignerCanvas::connectionEndAt(QPointF scenePos) const {
    NodeItem* node = nodeItemAt(scenePos, connectionSource_->node());
    if (!node) return nullptr;
    return connectionSource_->kind() == PortItem::Kind::Output ? node->inputPort() : node->outputPort();
}

void DesignerCanvas::setTargetedPort(PortItem* port) {
    if (port == targetedPort_) return;
    if (targetedPort_) targetedPort_->setTargeted(false);
    targetedPort_ = port;
    if (targetedPort_) targetedPort_->setTargeted(true);
}

void DesignerCanvas::mouseReleaseEvent(QGraphicsSceneMouseEvent* event) {
    QGraphicsScene::mouseReleaseEvent(event);
    QHash<QString, QPointF> moved;
    for (auto it = positionsAtPress_.cbegin(); it != positionsAtPress_.cend(); ++it)
        if (NodeItem* node = nodes_.value(it.key()); node && node->pos() != it.value())
            moved.insert(it.key(), node->pos());
    positionsAtPress_.clear();
    if (!moved.isEmpty()) tryEdit([&] { document_->moveNodes(moved); });
}

void DesignerCanvas::dragEnterEvent(QGraphicsSceneDragDropEvent* event) {
    if (event->mimeData()->hasFormat(layerMimeType)) event->acceptProposedAction();
    else event->ignore();
}

void DesignerCanvas::dragMoveEvent(QGraphicsSceneDragDropEvent* event) {
    if (event->mimeData()->hasFormat(layerMimeType)) event->acceptProposedAction();
    else event->ignore();
}

void DesignerCanvas::dropEvent(QGraphicsSceneDragDropEvent* event) {
    if (!event->mimeData()->hasFormat(layerMimeType)) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    addNodeAt(QString::fromUtf8(event->mimeData()->data(layerMimeType)), event->scenePos());
}

void DesignerCanvas::drawBackground(QPainter* painter, const QRectF& rect) {
    const QPalette colors = palette();
    painter->fillRect(rect, colors.color(QPalette::Base));
    if (exporting_) return;  // exported images get a plain background
    QColor dot = colors.color(QPalette::Mid);
    dot.setAlphaF(0.5f);
    painter->setPen(QPen(dot, 1.5));
    const double left = std::floor(rect.left() / gridSpacing) * gridSpacing;
    const double top = std::floor(rect.top() / gridSpacing) * gridSpacing;
    QVector<QPointF> dots;
    for (double x = left; x < rect.right(); x += gridSpacing)
        for (double y = top; y < rect.bottom(); y += gridSpacing) dots.append(QPointF(x, y));
    painter->drawPoints(dots.constData(), int(dots.size()));
}

QImage DesignerCanvas::renderImage(double scale) {
    const QList<QGraphicsItem*> selection = selectedItems();
    clearSelection();
    exporting_ = true;
    const bool overview = overview_;
    setOverview(false);  // an exported drawing shows the full cards, never the overview labels
    const QRectF source = itemsBoundingRect().adjusted(-exportMargin, -exportMargin, exportMargin, exportMargin);
    QImage image((source.size() * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(palette().color(QPalette::Base));
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        render(&painter, QRectF(QPointF(0, 0), source.size() * scale), source);
    }
    exporting_ = false;
    setOverview(overview);
    for (QGraphicsItem* item : selection) item->setSelected(true);
    return image;
}

void DesignerCanvas::exportPng(const QString& path) {
    if (!renderImage().save(path, "PNG"))
        throw Error("could not write the PNG image", path.toStdString(),
                    "check that the folder exists and you may write to it");
}

void DesignerCanvas::exportSvg(const QString& path) {
    {
        QFile probe(path);
        if (!probe.open(QIODevice::WriteOnly))
            throw Error("could not write the SVG image: " + probe.errorString().toStdString(),
                        path.toStdString(), "check that the folder exists and you may write to it");
    }
    const QList<QGraphicsItem*> selection = selectedItems();
    clearSelection();
    exporting_ = true;
    const bool overview = overview_;
    setOverview(false);  // an exported drawing shows the full cards, never the overview labels
    const QRectF source = itemsBoundingRect().adjusted(-exportMargin, -exportMargin, exportMargin, exportMargin);
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(source.size().toSize());
    generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
    generator.setTitle(QString::fromStdString(document_->spec().name));
    generator.setDescription(tr("Network diagram drawn by CNN Studio"));
    {
        QPainter painter(&generator);
        painter.fillRect(QRectF(QPointF(0, 0), source.size()), palette().color(QPalette::Base));
        render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    }
    exporting_ = false;
    setOverview(overview);
    for (QGraphicsItem* item : selection) item->setSelected(true);
}

}  // namespace cnnstudio::ui
