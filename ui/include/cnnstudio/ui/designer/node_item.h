// NodeItem: one layer on the designer canvas — a card with the node's name and type, its output
// shape, parameters and FLOPs from the live shape analysis, an input port on top (none for an
// Input node) and an output port at the bottom. A node the analysis rejects is drawn red and
// carries the message as its tooltip.
#pragma once

#include <QGraphicsItem>
#include <QList>
#include <QString>

#include "cnnstudio/shape_inference.h"

namespace cnnstudio::ui {

class EdgeItem;

class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };
    enum class Port { None, Input, Output };

    NodeItem(const QString& name, const QString& layerType);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    QString name() const { return name_; }
    void setName(const QString& name);
    QString layerType() const { return layerType_; }
    bool hasInputPort() const { return hasInputPort_; }

    // info: the analysis of this node (null when the analysis has none); problem: empty when fine.
    void setAnalysis(const NodeInfo* info, const QString& problem);
    QString problem() const { return problem_; }
    QString annotationText() const;  // the shape / parameters / FLOPs lines as drawn

    QPointF inputPortScenePos(int slot = 0, int slotCount = 1) const;
    QPointF outputPortScenePos() const;
    Port portAt(QPointF scenePos) const;

    void addEdge(EdgeItem* edge) { edges_.append(edge); }
    void removeEdge(EdgeItem* edge) { edges_.removeAll(edge); }
    const QList<EdgeItem*>& edges() const { return edges_; }

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

private:
    QString name_, layerType_, category_;
    bool hasInputPort_ = true;
    QString shapeLine_, costLine_, problem_;
    QList<EdgeItem*> edges_;
};

}  // namespace cnnstudio::ui
