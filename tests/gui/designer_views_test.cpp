// The designer's views over a DesignDocument: the canvas mirrors nodes and edges (through undo
// too), nodes carry the analysis, the problems list selects its node, the inspector's editors
// make undoable edits, the palette lists the whole catalogue, and the drawing exports.
#include <algorithm>

#include <QFile>
#include <QHash>
#include <QPainterPath>
#include <QGraphicsSceneMouseEvent>
#include <QImage>
#include <QKeyEvent>
#include <QLineEdit>
#include <QLabel>
#include <QListWidget>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "cnnstudio/error.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/designer/auto_layout.h"
#include "cnnstudio/ui/designer/design_area.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "cnnstudio/ui/designer/designer_view.h"
#include "cnnstudio/ui/designer/edge_item.h"
#include "cnnstudio/ui/designer/inspector_panel.h"
#include "cnnstudio/ui/designer/layer_palette.h"
#include "cnnstudio/ui/designer/node_item.h"
#include "cnnstudio/ui/designer/port_item.h"
#include "cnnstudio/ui/designer/problems_panel.h"
#include "gui_tests.h"

using cnnstudio::ui::DesignArea;
using cnnstudio::ui::DesignDocument;
using cnnstudio::ui::DesignerCanvas;
using cnnstudio::ui::NodeItem;

namespace {

int edgeCount(const cnnstudio::NetworkSpec& spec) {
    int count = 0;
    for (const cnnstudio::NodeSpec& node : spec.nodes) count += int(node.inputs.size());
    return count;
}

// Two convolutions of different widths into one Add: a shape error on the Add.
QString buildMismatchedAdd(DesignDocument& document) {
    document.newNetwork();
    QStringList convs;
    for (int filters : {8, 16}) {
        const QString conv = document.addNode("Conv2D", {filters * 20.0, 150});
        document.setParam(conv, "filters", filters);
        document.setParam(conv, "kernel", 3);
        document.connectNodes("input", conv);
        convs << conv;
    }
    const QString add = document.addNode("Add", {0, 300});
    document.connectNodes(convs[0], add);
    document.connectNodes(convs[1], add);
    return add;
}

// Moves every node of `document` into one column, in spec order, as a user's saved spec may
// hold a long network.
void placeInOneColumn(DesignDocument& document) {
    QHash<QString, QPointF> oneColumn;
    double y = 0;
    for (const cnnstudio::NodeSpec& node : document.spec().nodes) {
        oneColumn.insert(QString::fromStdString(node.name), QPointF(0, y));
        y += cnnstudio::ui::NodeMetrics::height + cnnstudio::ui::NodeMetrics::verticalGap;
    }
    document.moveNodes(oneColumn);
}

}  // namespace

class DesignerViewsTest : public QObject {
    Q_OBJECT

private slots:
    void canvasMirrorsTheDocumentThroughUndoAndRedo() {
        DesignDocument document;
        document.loadPreset("mini-xception");
        DesignerCanvas canvas(&document);
        auto check = [&] {
            const QList<QGraphicsItem*> items = canvas.items();
            const auto nodeItems = std::count_if(items.begin(), items.end(), [](QGraphicsItem* item) {
                return qgraphicsitem_cast<NodeItem*>(item) != nullptr;
            });
            QCOMPARE(int(nodeItems), int(document.spec().nodes.size()));
            QCOMPARE(int(canvas.edgeItems().size()), edgeCount(document.spec()));
            for (const cnnstudio::NodeSpec& node : document.spec().nodes) {
                NodeItem* item = canvas.nodeItem(QString::fromStdString(node.name));
                QVERIFY(item);
                QCOMPARE(item->pos(), document.position(QString::fromStdString(node.name)));
            }
        };
        check();
        const QString victim = QString::fromStdString(document.spec().nodes[3].name);
        canvas.selectNode(victim);
        canvas.deleteSelection();
        QVERIFY(!canvas.nodeItem(victim));
        check();
        document.undoStack()->undo();
        QVERIFY(canvas.nodeItem(victim));
        check();
        document.autoLayout();
        check();
        document.undoStack()->undo();
        check();
        document.undoStack()->redo();
        check();
    }

    void undoOfDeleteAllRestoresEveryEdgeItem() {
        DesignDocument document;
        document.loadPreset("lenet5");
        DesignerCanvas canvas(&document);
        const int edges = edgeCount(document.spec());
        QVERIFY(edges > 0);
        for (QGraphicsItem* item : canvas.items()) item->setSelected(true);
        canvas.deleteSelection();
        QVERIFY(document.spec().nodes.empty());
        QVERIFY(canvas.edgeItems().isEmpty());
        document.undoStack()->undo();
        QCOMPARE(int(canvas.edgeItems().size()), edges);
        for (cnnstudio::ui::EdgeItem* edge : canvas.edgeItems()) {
            const cnnstudio::NodeSpec* target = document.spec().find(edge->target()->name().toStdString());
            QVERIFY(target);
            QCOMPARE(std::count(target->inputs.begin(), target->inputs.end(), edge->source()->name().toStdString()),
                     std::ptrdiff_t(1));
        }
    }

    void nodesShowTheirAnalysisAndErrorsInRed() {
        DesignDocument document;
        const QString add = buildMismatchedAdd(document);
        DesignerCanvas canvas(&document);
        NodeItem* addItem = canvas.nodeItem(add);
        QVERIFY(addItem);
        QVERIFY(!addItem->problem().isEmpty());
        QVERIFY2(addItem->toolTip().contains(addItem->problem()), qPrintable(addItem->toolTip()));

        NodeItem* conv = canvas.nodeItem("conv2d1");
        QVERIFY(conv);
        QVERIFY(conv->problem().isEmpty());
        QVERIFY2(conv->annotationText().contains(QStringLiteral("8×26×26")), qPrintable(conv->annotationText()));
        QVERIFY2(conv->annotationText().contains("80 params"), qPrintable(conv->annotationText()));

        document.setParam("conv2d2", "filters", 8);
        QVERIFY(addItem->problem().isEmpty());
        QVERIFY2(addItem->annotationText().contains(QStringLiteral("8×26×26")), qPrintable(addItem->annotationText()));
    }

    void clickingAProblemSelectsItsNode() {
        DesignDocument document;
        const QString add = buildMismatchedAdd(document);
        DesignArea area(&document);
        area.resize(1200, 800);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        QVERIFY(area.problems()->problemCount() >= 1);
        QVERIFY2(area.problems()->problemText(0).startsWith(add + ":"), qPrintable(area.problems()->problemText(0)));

        auto* list = area.problems()->findChild<QListWidget*>("problemsList");
        QVERIFY(list);
        const QRect row = list->visualItemRect(list->item(0));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, row.center());
        QCOMPARE(area.canvas()->selectedNode(), add);
        QCOMPARE(area.inspector()->node(), add);
    }

    // Audit item 26: a new network's summary counts "1 node", not "1 nodes".
    void aNewNetworkCountsOneNode() {
        DesignDocument document;
        document.newNetwork();
        DesignArea area(&document);
        const QString summary = area.inspector()->findChild<QLabel*>("nodeInfo")->text();
        QVERIFY2(summary.startsWith("<b>1</b> node<br>"), qPrintable(summary));
    }

    // Audit item 21: a fresh Conv2D's problem names every parameter it still needs, not one at a time.
    void aFreshConv2DListsEveryMissingParameterAtOnce() {
        DesignDocument document;
        document.newNetwork();
        const QString conv = document.addNode("Conv2D", {0, 150});
        document.connectNodes(document.spec().nodes.front().name.c_str(), conv);
        DesignArea area(&document);
        QStringList problems;
        for (int i = 0; i < area.problems()->problemCount(); ++i) problems << area.problems()->problemText(i);
        const QStringList missing = problems.filter("missing parameter");
        QVERIFY2(missing.size() == 1, qPrintable(problems.join('\n')));
        QVERIFY2(missing[0].startsWith(conv + ":") && missing[0].contains("'filters'") && missing[0].contains("'kernel'"),
                 qPrintable(problems.join('\n')));
    }

    // The inspector scrolls: the wheel passes over a parameter without focus instead of editing
    // the design, for every node's editors (they are built again per node).
    void inspectorEditorsTakeTheWheelOnlyWithFocus() {
        DesignDocument document;
        document.loadPreset("lenet5");
        cnnstudio::ui::InspectorPanel inspector(&document);
        inspector.show();
        inspector.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&inspector));
        QStringList convolutions;
        for (const cnnstudio::NodeSpec& node : document.spec().nodes)
            if (node.type == "Conv2D") convolutions << QString::fromStdString(node.name);
        QVERIFY(convolutions.size() >= 2);
        for (const QString& conv : convolutions) {
            inspector.setNode(conv);
            auto* filters = qobject_cast<QSpinBox*>(inspector.editorFor("filters"));
            QVERIFY(filters);
            const int before = document.spec().find(conv.toStdString())->params.at("filters").get<int>();
            cnnstudio::ui::tests::wheelOneNotchDownOn(filters);
            QCOMPARE(document.spec().find(conv.toStdString())->params.at("filters").get<int>(), before);
            QTRY_VERIFY(filters->isVisible());  // laid out once the event loop runs
            filters->setFocus();
            QTRY_VERIFY(filters->hasFocus());
            cnnstudio::ui::tests::wheelOneNotchDownOn(filters);
            QCOMPARE(document.spec().find(conv.toStdString())->params.at("filters").get<int>(), before - 1);
        }
    }

    void inspectorEditorsMakeUndoableEdits() {
        DesignDocument document;
        document.loadPreset("lenet5");
        cnnstudio::ui::InspectorPanel inspector(&document);
        QString conv;
        for (const cnnstudio::NodeSpec& node : document.spec().nodes)
            if (node.type == "Conv2D" && conv.isEmpty()) conv = QString::fromStdString(node.name);
        inspector.setNode(conv);

        auto* filters = qobject_cast<QSpinBox*>(inspector.editorFor("filters"));
        QVERIFY(filters);
        const cnnstudio::ParamInfo* info = nullptr;
        for (const cnnstudio::ParamInfo& param : cnnstudio::findLayerType("Conv2D")->params)
            if (param.name == "filters") info = &param;
        QVERIFY(info);
        QCOMPARE(filters->maximum(), int(info->maximum));  // bounded by the catalogue
        const int before = document.spec().find(conv.toStdString())->params.at("filters").get<int>();
        filters->setValue(before + 5);
        QCOMPARE(document.spec().find(conv.toStdString())->params.at("filters").get<int>(), before + 5);
        document.undoStack()->undo();
        QCOMPARE(document.spec().find(conv.toStdString())->params.at("filters").get<int>(), before);
        QCOMPARE(filters->value(), before);  // the editor follows the document

        auto* kernel = inspector.editorFor("kernel");
        QVERIFY(kernel);
        auto* kernelWidth = kernel->findChild<QSpinBox*>("width");
        QVERIFY(kernelWidth);
        kernelWidth->setValue(kernelWidth->value() + 2);
        QVERIFY(document.spec().find(conv.toStdString())->params.at("kernel").is_array());

        inspector.nameEditor()->setText("first_conv");
        emit inspector.nameEditor()->editingFinished();
        QVERIFY(document.hasNode("first_conv"));
        QCOMPARE(inspector.node(), QString("first_conv"));
        document.undoStack()->undo();
        QVERIFY(document.hasNode(conv));
    }

    // A cleared Name is refused with a message and the field shows the name again (audit item
    // 16: it stayed blank, with no word, while the node kept its name).
    void clearingTheNameIsRefusedAndTheNameComesBack() {
        DesignDocument document;
        document.loadPreset("lenet5");
        cnnstudio::ui::InspectorPanel inspector(&document);
        const QString node = QString::fromStdString(document.spec().nodes.back().name);
        inspector.setNode(node);
        QSignalSpy refused(&inspector, &cnnstudio::ui::InspectorPanel::editRefused);
        QLineEdit* name = inspector.nameEditor();
        name->clear();
        QTest::keyClick(name, Qt::Key_Return);
        QCOMPARE(name->text(), node);
        QVERIFY(document.hasNode(node));
        QCOMPARE(refused.size(), 1);
        QVERIFY2(refused.first().first().toString().contains("needs a name"), qPrintable(refused.first().first().toString()));
    }

    void paletteListsEveryLayerType() {
        cnnstudio::ui::LayerPalette palette;
        QStringList expected;
        for (const cnnstudio::LayerTypeInfo& info : cnnstudio::layerTypes()) expected << QString::fromStdString(info.type);
        QStringList listed = palette.layerTypeNames();
        listed.sort();
        expected.sort();
        QCOMPARE(listed, expected);
    }

    void draggingFromAnOutputPortConnectsNodes() {
        DesignDocument document;
        document.newNetwork();
        const QString relu = document.addNode("ReLU", {0, 200});
        DesignerCanvas canvas(&document);
        NodeItem* source = canvas.nodeItem("input");
        NodeItem* target = canvas.nodeItem(relu);
        const QPointF from = source->outputPortScenePos();
        const QPointF to = target->sceneBoundingRect().center();
        sendMouse(canvas, QEvent::GraphicsSceneMousePress, from);
        sendMouse(canvas, QEvent::GraphicsSceneMouseMove, to);
        sendMouse(canvas, QEvent::GraphicsSceneMouseRelease, to);
        QCOMPARE(document.spec().find(relu.toStdString())->inputs, std::vector<std::string>{"input"});
        QCOMPARE(canvas.edgeItems().size(), qsizetype(1));
    }

    // Through a real view, as a user drags: press on the output port (a little off its centre),
    // move in steps, release on the other node's input port.
    void portDragMakesExactlyOneEdgeAndNoRubberBand() {
        DesignDocument document;
        document.newNetwork();
        const QString relu = document.addNode("ReLU", document.position("input") + QPointF(0, 200));
        DesignerCanvas canvas(&document);
        cnnstudio::ui::DesignerView view(&canvas);
        view.resize(900, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.centerOn(canvas.nodeItem("input")->sceneBoundingRect().center() + QPointF(0, 100));
        int rubberBands = 0;
        connect(&view, &QGraphicsView::rubberBandChanged, this, [&](QRect rect) {
            if (!rect.isNull()) ++rubberBands;
        });
        NodeItem* source = canvas.nodeItem("input");
        const QPointF sourcePosition = source->pos();
        const QPoint from = view.mapFromScene(source->outputPortScenePos() + QPointF(9, 4));
        const QPoint to = view.mapFromScene(canvas.nodeItem(relu)->inputPortScenePos());
        QTest::mousePress(view.viewport(), Qt::LeftButton, {}, from);
        for (int step = 1; step <= 5; ++step) QTest::mouseMove(view.viewport(), from + (to - from) * step / 5);
        QCOMPARE(canvas.mode(), DesignerCanvas::Mode::Connect);
        QVERIFY(canvas.nodeItem(relu)->inputPort()->isHighlighted());
        QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, to);

        QCOMPARE(document.spec().find(relu.toStdString())->inputs, std::vector<std::string>{"input"});
        QCOMPARE(canvas.edgeItems().size(), qsizetype(1));
        QCOMPARE(document.undoStack()->count(), 2);  // the ReLU added, one connection
        QCOMPARE(rubberBands, 0);
        QCOMPARE(source->pos(), sourcePosition);
        QCOMPARE(canvas.mode(), DesignerCanvas::Mode::Select);
        // Once the mouse leaves it, the port that was the drag's target is plain again.
        QTest::mouseMove(view.viewport(), to + QPoint(300, 0));
        QTRY_VERIFY(!canvas.nodeItem(relu)->inputPort()->isHighlighted());
    }

    void hoveringAPortHighlightsItAndSaysWhatADragDoes() {
        DesignDocument document;
        document.newNetwork();
        DesignerCanvas canvas(&document);
        cnnstudio::ui::DesignerView view(&canvas);
        view.resize(600, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        cnnstudio::ui::PortItem* port = canvas.nodeItem("input")->outputPort();
        view.centerOn(port->scenePos());
        QVERIFY(!port->isHighlighted());
        QTest::mouseMove(view.viewport(), view.mapFromScene(port->scenePos() + QPointF(-8, 6)));
        QTRY_VERIFY(port->isHighlighted());
        QCOMPARE(view.viewport()->cursor().shape(), Qt::CrossCursor);
        QVERIFY2(port->toolTip().contains("drag", Qt::CaseInsensitive), qPrintable(port->toolTip()));
        QTest::mouseMove(view.viewport(), view.mapFromScene(port->scenePos() + QPointF(0, 120)));
        QTRY_VERIFY(!port->isHighlighted());
    }

    void fitShowsEveryNodeOfEveryPreset() {
        for (const std::string& preset : cnnstudio::presetNames()) {
            DesignDocument document;
            document.loadPreset(QString::fromStdString(preset));
            DesignerCanvas canvas(&document);
            cnnstudio::ui::DesignerView view(&canvas);
            view.resize(1000, 560);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            view.fitToContents();
            const QRectF visible = view.mapToScene(view.viewport()->rect()).boundingRect();
            for (const cnnstudio::NodeSpec& node : document.spec().nodes) {
                const QRectF card = canvas.nodeItem(QString::fromStdString(node.name))->sceneBoundingRect();
                QVERIFY2(visible.contains(card), qPrintable(QString::fromStdString(preset + ": " + node.name) +
                                                            QString(" is outside the fitted view at zoom %1")
                                                                .arg(view.zoom())));
            }
            QVERIFY(view.zoom() <= 1.0);
        }
    }

    // Audit item 19: a fitted network is fitted again when the window shrinks, until the user
    // zooms (then the zoom is the user's).
    void aFittedNetworkIsFittedAgainWhenTheViewShrinks() {
        DesignDocument document;
        document.loadPreset("fer-cnn");
        DesignerCanvas canvas(&document);
        cnnstudio::ui::DesignerView view(&canvas);
        view.resize(1400, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.fitToContents();
        view.resize(600, 380);
        QTRY_COMPARE_WITH_TIMEOUT(view.viewport()->height() < 400, true, 2000);
        QVERIFY(view.isFitted());
        const QRectF visible = view.mapToScene(view.viewport()->rect()).boundingRect();
        for (const cnnstudio::NodeSpec& node : document.spec().nodes) {
            const QRectF card = canvas.nodeItem(QString::fromStdString(node.name))->sceneBoundingRect();
            QVERIFY2(visible.contains(card), qPrintable(QString::fromStdString(node.name) + " is cut off"));
        }
        view.zoomIn();
        const double zoomed = view.zoom();
        QVERIFY(!view.isFitted());
        view.resize(500, 300);
        QTRY_COMPARE_WITH_TIMEOUT(view.viewport()->height() < 320, true, 2000);
        QCOMPARE(view.zoom(), zoomed);
    }

    void zoomedFarOutTheCardsCarryReadableLabels() {
        // A user's network drawn in one long column, as a saved spec may hold it: the layout is
        // kept, and fitted in a small window the cards are too small to read.
        DesignDocument document;
        document.loadPreset("fer-cnn");
        placeInOneColumn(document);
        DesignArea area(&document);
        area.resize(1024, 700);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        area.view()->fitToContents();
        QVERIFY(area.view()->zoom() < NodeItem::overviewBelowScale);
        NodeItem* conv = area.canvas()->nodeItem("conv1_1");
        QVERIFY(conv && conv->isOverview());
        area.view()->resetZoom();
        QVERIFY(!conv->isOverview());
    }

    void overviewLabelsAreLeftOutWhereTheyWouldRunIntoTheNextColumn() {
        DesignDocument document;
        document.loadPreset("fer-cnn");  // wrapped into columns 100 scene units apart
        DesignerCanvas canvas(&document);
        QVERIFY(!canvas.overviewLabelsFitAt(0.2));
        placeInOneColumn(document);
        QVERIFY(canvas.overviewLabelsFitAt(0.2));
    }

    void aLongChainFittedInTheDefaultWindowShowsReadableCards() {
        DesignDocument document;
        document.loadPreset("fer-cnn");
        DesignArea area(&document);
        area.resize(1400, 800);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        area.view()->fitToContents();
        // In one column it was fitted at about 0.15, every card a blank sliver.
        QVERIFY2(area.view()->zoom() >= 0.5, qPrintable(QString("zoom %1").arg(area.view()->zoom())));
        QVERIFY(!area.canvas()->nodeItem("conv1_1")->isOverview());
    }

    void theEdgeToTheNextColumnPassesNoCard() {
        DesignDocument document;
        document.loadPreset("fer-cnn");
        DesignerCanvas canvas(&document);
        int climbing = 0;
        for (cnnstudio::ui::EdgeItem* edge : canvas.edgeItems())
            if (edge->target()->pos().y() < edge->source()->pos().y()) ++climbing;
        QVERIFY(climbing > 0);
        const QStringList crossings = edgesCrossingCards(canvas);
        QVERIFY2(crossings.isEmpty(), qPrintable(crossings.join("; ")));
    }

    void theSkipConnectionsOfAResidualNetworkPassNoCard() {
        // resnet-fer's identity skips run from a card to an Add further down the same column,
        // past the block's cards; its projection shortcuts stand beside those cards.
        DesignDocument document;
        document.loadPreset("resnet-fer");
        DesignerCanvas canvas(&document);
        NodeItem* blockInput = canvas.nodeItem("stem_relu");
        NodeItem* add = canvas.nodeItem("s1b1_add");
        QVERIFY(blockInput && add);
        QCOMPARE(blockInput->pos().x(), add->pos().x());
        const QStringList crossings = edgesCrossingCards(canvas);
        QVERIFY2(crossings.isEmpty(), qPrintable(crossings.join("; ")));
    }

    void pickingALayerThenClickingPlacesIt() {
        DesignDocument document;
        document.newNetwork();
        DesignerCanvas canvas(&document);
        canvas.startInserting("ReLU");
        QCOMPARE(canvas.mode(), DesignerCanvas::Mode::InsertNode);
        sendMouse(canvas, QEvent::GraphicsSceneMousePress, QPointF(300, 400));
        QCOMPARE(canvas.mode(), DesignerCanvas::Mode::Select);
        QVERIFY(document.hasNode("relu1"));
        QCOMPARE(document.position("relu1") + QPointF(cnnstudio::ui::NodeMetrics::width / 2,
                                                       cnnstudio::ui::NodeMetrics::height / 2),
                 QPointF(300, 400));
        QCOMPARE(canvas.selectedNode(), QString("relu1"));

        canvas.startInserting("Dense");
        QKeyEvent escape(QEvent::KeyPress, Qt::Key_Escape, Qt::NoModifier);
        QCoreApplication::sendEvent(&canvas, &escape);
        QCOMPARE(canvas.mode(), DesignerCanvas::Mode::Select);
        sendMouse(canvas, QEvent::GraphicsSceneMousePress, QPointF(600, 400));
        QVERIFY(!document.hasNode("dense1"));
    }

    void diagramExportsAsPngAndSvg() {
        QTemporaryDir folder;
        DesignDocument document;
        document.loadPreset("lenet5");
        DesignerCanvas canvas(&document);
        canvas.exportPng(folder.filePath("net.png"));
        QImage image(folder.filePath("net.png"));
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > image.height());  // lenet5's 13 layers, wrapped into columns side by side
        canvas.exportSvg(folder.filePath("net.svg"));
        QFile svg(folder.filePath("net.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("lenet5"));
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, canvas.exportPng("/nonexistent/folder/net.png"));
    }

private:
    // "source → target crosses card" for every edge drawn through a card other than its ends.
    static QStringList edgesCrossingCards(const DesignerCanvas& canvas) {
        QStringList crossings;
        for (cnnstudio::ui::EdgeItem* edge : canvas.edgeItems()) {
            const QPainterPath path = edge->mapToScene(edge->path());
            for (QGraphicsItem* item : canvas.items()) {
                auto* card = qgraphicsitem_cast<NodeItem*>(item);
                if (!card || card == edge->source() || card == edge->target()) continue;
                const QRectF rect = card->mapRectToScene(card->shape().boundingRect());
                for (int step = 0; step <= 200; ++step)
                    if (rect.contains(path.pointAtPercent(step / 200.0))) {
                        crossings << edge->source()->name() + " → " + edge->target()->name() + " crosses " + card->name();
                        break;
                    }
            }
        }
        return crossings;
    }

    static void sendMouse(DesignerCanvas& canvas, QEvent::Type type, QPointF scenePos) {
        QGraphicsSceneMouseEvent event(type);
        event.setScenePos(scenePos);
        event.setButton(type == QEvent::GraphicsSceneMouseMove ? Qt::NoButton : Qt::LeftButton);
        event.setButtons(type == QEvent::GraphicsSceneMouseRelease ? Qt::NoButton : Qt::LeftButton);
        QCoreApplication::sendEvent(&canvas, &event);
    }
};

CNNSTUDIO_GUI_TEST(DesignerViewsTest);

#include "designer_views_test.moc"
