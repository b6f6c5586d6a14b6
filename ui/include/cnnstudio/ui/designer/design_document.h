// DesignDocument: the network being designed — a NetworkSpec, its shape analysis and the undo
// stack of every edit. The designer's views (canvas, inspector, problems list, status bar)
// observe it through signals and edit it only through its methods, each of which pushes one
// undoable command. Node positions live in spec().layout, so saving keeps the drawing.
#pragma once

#include <QHash>
#include <QObject>
#include <QPointF>
#include <QRectF>
#include <QSet>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"

class QUndoStack;

namespace cnnstudio::ui {

class DesignDocument : public QObject {
    Q_OBJECT

public:
    explicit DesignDocument(QObject* parent = nullptr);

    const NetworkSpec& spec() const { return spec_; }
    // Shape inference of the current spec, refreshed after every change.
    const ShapeReport& report() const { return report_; }
    QUndoStack* undoStack() const { return undoStack_; }
    QString filePath() const { return filePath_; }
    bool isModified() const;
    QPointF position(const QString& node) const;
    bool hasNode(const QString& node) const;

    // Whole-document operations: they replace the spec and clear the undo history.
    // Nodes without a position in spec.layout are placed by the auto-layout.
    void reset(NetworkSpec spec, const QString& filePath = {});
    void newNetwork();                        // one Input node, nothing else
    void loadPreset(const QString& name);     // throws Error listing the presets
    void open(const QString& path);           // throws Error naming the file
    void save(const QString& path);           // throws Error naming the file; marks clean

    // Undoable edits. Each throws Error (what, which node, what to do) when the edit makes no
    // sense — unknown type, missing node, duplicate name — and then changes nothing.
    // Returns the new node's name. Given `after`, a node that takes an input is fed by it.
    QString addNode(const QString& type, QPointF position, const QString& after = {});
    void removeNodes(const QStringList& nodes);               // with every edge touching them
    // Removes nodes and edges (pairs from -> to) as one undo step.
    void removeItems(const QStringList& nodes, const QList<QPair<QString, QString>>& edges);
    void moveNodes(const QHash<QString, QPointF>& newPositions);
    void connectNodes(const QString& from, const QString& to);
    void disconnectNodes(const QString& from, const QString& to);
    // A null value removes the parameter (the layer's default applies).
    void setParam(const QString& node, const QString& param, const nlohmann::json& value);
    void renameNode(const QString& oldName, const QString& newName);
    // The network's own name, which names its runs and files. Throws Error when empty.
    void setNetworkName(const QString& name);
    void autoLayout();

    // Copy and paste of a part of the network. copyNodes returns a fragment: those nodes with
    // their parameters and positions, and only the edges between them. Input nodes are left out,
    // since a network has exactly one. pasteNodes adds a fragment as one undo step, its top-left
    // node corner at topLeft, renaming nodes whose names are taken (conv1 -> conv1_2), and
    // returns the new names in the fragment's order. duplicateNodes does both, in the first free
    // place to the right of the originals.
    NetworkSpec copyNodes(const QStringList& nodes) const;
    QStringList pasteNodes(const NetworkSpec& fragment, QPointF topLeft, const QString& undoText = {});
    QStringList duplicateNodes(const QStringList& nodes);
    // The first place at or to the right of `wanted` (a rectangle of node cards) that overlaps no node.
    QPointF freePlaceFor(const QRectF& wanted) const;
    // Where a node added without a chosen place goes: below `after` (or below the lowest node when
    // `after` is empty or unknown), in the first free place.
    QPointF placeBelow(const QString& after) const;

signals:
    void documentReset();  // the whole spec changed: views rebuild
    void nodeAdded(const QString& node);
    void nodeRemoved(const QString& node);
    void nodeMoved(const QString& node, QPointF position);
    void nodeInputsChanged(const QString& node);  // the edges into `node` changed
    void nodeParamsChanged(const QString& node);
    void nodeRenamed(const QString& oldName, const QString& newName);
    void networkNameChanged(const QString& name);
    void analysisChanged();  // report() is fresh: after every change that can alter shapes
    void specChanged();      // after every change of spec(), moves included
    void filePathChanged(const QString& path);
    void modifiedChanged(bool modified);

private:
    // The primitive edits the undo commands replay (src/design_commands.h reaches them through
    // DocumentEdit); each emits its fine-grained signal and refreshes the analysis.
    friend class DocumentEdit;
    struct RemovedNode {
        int index = 0;
        NodeSpec node;
        QPointF position;
    };
    void insertNodePrimitive(const RemovedNode& node);
    RemovedNode eraseNodePrimitive(const QString& node);
    void setInputsPrimitive(const QString& node, const std::vector<std::string>& inputs);
    void setParamsPrimitive(const QString& node, const nlohmann::json& params);
    void setPositionPrimitive(const QString& node, QPointF position);
    void renamePrimitive(const QString& oldName, const QString& newName);
    void setNetworkNamePrimitive(const QString& name);

    NodeSpec& nodeOrThrow(const QString& node);
    QString uniqueNodeName(const QString& type) const;
    QString uniqueCopyName(const QString& name, const QSet<QString>& alsoTaken) const;
    QRectF nodeRect(const std::string& node) const;
    void reanalyse();

    NetworkSpec spec_;
    ShapeReport report_;
    QUndoStack* undoStack_;
    QString filePath_;
};

}  // namespace cnnstudio::ui
