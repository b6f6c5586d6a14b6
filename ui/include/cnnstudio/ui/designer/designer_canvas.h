// DesignerCanvas: the scene of the network designer (after Qt's diagramscene example). It mirrors
// a DesignDocument — one NodeItem per node, one EdgeItem per input edge — and turns the user's
// gestures into document edits: drop a layer from the palette to add it (or pick it in the palette
// and click where it goes: InsertNode mode), drag from a port to another node to connect (the
// PortItem owns the drag; Connect mode while the line follows the mouse), drag nodes to move
// them, Delete to remove the selection, Escape to leave a mode. Copy, paste and duplicate work on
// the selected nodes (the clipboard carries them as a spec fragment), and the right button opens
// a menu for the node under it or for the canvas.
#pragma once

#include <memory>

#include <QGraphicsScene>
#include <QHash>
#include <QPointF>
#include <QStringList>

#include "cnnstudio/spec.h"

class QGraphicsLineItem;
class QMenu;

namespace cnnstudio::ui {

class DesignDocument;
class EdgeItem;
class NodeItem;
class PortItem;

class DesignerCanvas : public QGraphicsScene {
    Q_OBJECT

public:
    // The MIME type LayerPalette drags carry: the layer type's name, UTF-8.
    static constexpr const char* layerMimeType = "application/x-cnnstudio-layer-type";
    // The MIME type of copied nodes: a spec fragment (DesignDocument::copyNodes) as JSON.
    static constexpr const char* nodesMimeType = "application/x-cnnstudio-nodes";

    enum class Mode { Select, InsertNode, Connect };

    explicit DesignerCanvas(DesignDocument* document, QObject* parent = nullptr);
    ~DesignerCanvas() override;

    DesignDocument* document() const { return document_; }
    NodeItem* nodeItem(const QString& name) const { return nodes_.value(name); }
    QList<EdgeItem*> edgeItems() const;
    QStringList selectedNodeNames() const;
    QString selectedNode() const;  // the one selected node, empty unless exactly one
    Mode mode() const { return mode_; }
    QString insertType() const { return insertType_; }
    bool canPaste() const;  // the clipboard holds copied nodes

    // The menu the right button opens at scenePos: for the node there (selecting it first), or
    // for the canvas. Public so tests can read and trigger it without a modal menu.
    std::unique_ptr<QMenu> contextMenuAt(QPointF scenePos);

    // Renders the drawing (everything, unselected) to files; throws Error when a file cannot be written.
    QImage renderImage(double scale = 2.0);
    void exportPng(const QString& path);
    void exportSvg(const QString& path);

public slots:
    void selectNode(const QString& name);  // and scrolls the views to it
    void deleteSelection();
    void addNodeAt(const QString& type, QPointF scenePos);  // centred on scenePos
    // In free space below the selected node and fed by it, or below the last node, unconnected,
    // when none is selected.
    void addNodeBelowSelection(const QString& type);
    void copySelection();
    void paste();  // beside where the nodes were copied from, in free space
    void pasteAt(QPointF scenePos);  // the copied nodes' top-left corner at scenePos
    void duplicateSelection();
    // Zoomed far out: cards drawn plain with their name and shape in a readable label beside them.
    void setOverview(bool overview);
    // Whether overview labels at this zoom clear each other and every other card: beside a
    // column of a wrapped layout a label would run into the next column.
    bool overviewLabelsFitAt(double zoom) const;
    void startInserting(const QString& type);  // the next click on the canvas places a `type` node
    void cancelMode();                          // back to Select

signals:
    void selectedNodeChanged(const QString& name);  // empty: none, or several
    // Something the user tried was refused (a connection that would make a cycle, ...).
    void editRefused(const QString& message);
    void modeChanged(Mode mode);
    void renameRequested(const QString& node);  // the user asked to rename it (context menu)
    void fitRequested();                        // the user asked to see the whole network

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;
    void dragEnterEvent(QGraphicsSceneDragDropEvent* event) override;
    void dragMoveEvent(QGraphicsSceneDragDropEvent* event) override;
    void dropEvent(QGraphicsSceneDragDropEvent* event) override;
    void drawBackground(QPainter* painter, const QRectF& rect) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QGraphicsSceneContextMenuEvent* event) override;

private:
    void rebuild();
    void growSceneRect();
    void addNodeItem(const QString& name);
    void addNodeWithEdges(const QString& name);  // the node, its input edges and its output edges
    void removeNodeItem(const QString& name);
    void rebuildInputEdges(const QString& name);
    void refreshAnalysis();
    NodeItem* nodeItemAt(QPointF scenePos, const NodeItem* except = nullptr) const;
    void startConnection(PortItem* port, QPointF scenePos);
    void followConnection(PortItem* port, QPointF scenePos);
    void finishConnection(PortItem* port, QPointF scenePos);
    // The port of the node under scenePos that the connection being drawn would end on.
    PortItem* connectionEndAt(QPointF scenePos) const;
    void setTargetedPort(PortItem* port);
    void selectNodes(const QStringList& names);
    NetworkSpec clipboardFragment() const;  // throws Error when the clipboard's layers cannot be read
    void addLayerMenu(QMenu* menu, QPointF scenePos);
    template <typename Edit> void tryEdit(Edit&& edit);
    void setMode(Mode mode);

    DesignDocument* document_;
    QHash<QString, NodeItem*> nodes_;
    QGraphicsLineItem* pendingConnection_ = nullptr;
    PortItem* connectionSource_ = nullptr;
    PortItem* targetedPort_ = nullptr;
    QHash<QString, QPointF> positionsAtPress_;
    QString lastSelected_;
    bool exporting_ = false;
    bool overview_ = false;
    Mode mode_ = Mode::Select;
    QString insertType_;
};

}  // namespace cnnstudio::ui
