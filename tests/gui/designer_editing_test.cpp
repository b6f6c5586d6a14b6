// Editing on the Design page as a user does it: the clipboard and duplicate, the right-button
// menus, where palette layers land, the placing hint, the analysis table, the network's name,
// edges around and over cards, and a toolbar that keeps still while the undo text changes.
#include <optional>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QGraphicsSceneDragDropEvent>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QUndoStack>

#include "cnnstudio/layer_types.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/designer/analysis_panel.h"
#include "cnnstudio/ui/designer/analysis_table_model.h"
#include "cnnstudio/ui/designer/auto_layout.h"
#include "cnnstudio/ui/designer/design_area.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "cnnstudio/ui/designer/designer_canvas.h"
#include "cnnstudio/ui/designer/edge_item.h"
#include "cnnstudio/ui/designer/inspector_panel.h"
#include "cnnstudio/ui/designer/layer_palette.h"
#include "cnnstudio/ui/designer/node_item.h"
#include "cnnstudio/ui/main_window.h"
#include "gui_tests.h"

using cnnstudio::ui::DesignArea;
using cnnstudio::ui::DesignDocument;
using cnnstudio::ui::DesignerCanvas;
using cnnstudio::ui::NodeMetrics;

namespace {

QAction* actionNamed(QMenu& menu, const QString& text) {
    for (QAction* action : menu.actions())
        if (action->text() == text) return action;
    return nullptr;
}

QStringList actionTexts(QMenu& menu) {
    QStringList texts;
    for (QAction* action : menu.actions())
        if (!action->isSeparator()) texts << action->text();
    return texts;
}

QTreeWidgetItem* paletteItem(cnnstudio::ui::LayerPalette& palette, const QString& type) {
    auto* tree = palette.findChild<QTreeWidget*>("layerTree");
    // Layers sit under their category, and the Input category has an Input layer: skip the groups.
    for (QTreeWidgetItem* item : tree->findItems(type, Qt::MatchExactly | Qt::MatchRecursive))
        if (item->parent()) return item;
    return nullptr;
}

QRectF cardAt(const DesignDocument& document, const QString& node) {
    return QRectF(document.position(node), QSizeF(NodeMetrics::width, NodeMetrics::height));
}

// The edge from the Input node into the Add, past the layers between them.
cnnstudio::ui::EdgeItem* skipEdge(const DesignerCanvas& canvas, const QString& add) {
    for (cnnstudio::ui::EdgeItem* edge : canvas.edgeItems())
        if (edge->source()->name() == "input" && edge->target()->name() == add) return edge;
    return nullptr;
}

// A point of the edge well inside the card, if it has one.
std::optional<QPointF> crossingPoint(const cnnstudio::ui::EdgeItem* edge, const QRectF& card) {
    const QPainterPath path = edge->mapToScene(edge->path());
    for (int step = 0; step <= 200; ++step)
        if (const QPointF point = path.pointAtPercent(step / 200.0); card.adjusted(10, 10, -10, -10).contains(point))
            return point;
    return std::nullopt;
}

}  // namespace

class DesignerEditingTest : public QObject {
    Q_OBJECT

private slots:
    void copyAndPasteThroughTheClipboardKeepTheEdgesBetweenTheCopies() {
        DesignDocument document;
        document.loadPreset("lenet5");
        DesignerCanvas canvas(&document);
        QStringList chain;
        for (const cnnstudio::NodeSpec& node : document.spec().nodes)
            if (node.type != "Input" && chain.size() < 3) chain << QString::fromStdString(node.name);
        for (const QString& name : chain) canvas.nodeItem(name)->setSelected(true);
        const int nodesBefore = int(document.spec().nodes.size());
        const int edgesBefore = int(canvas.edgeItems().size());
        canvas.copySelection();
        QVERIFY(canvas.canPaste());
        QVERIFY(QApplication::clipboard()->mimeData()->text().contains(chain.first()));
        canvas.paste();
        QCOMPARE(int(document.spec().nodes.size()), nodesBefore + 3);
        QCOMPARE(int(canvas.edgeItems().size()), edgesBefore + 2);  // the two edges inside the chain
        const QStringList pasted = canvas.selectedNodeNames();
        QCOMPARE(pasted.size(), 3);
        for (const QString& copy : pasted)
            for (const QString& original : chain)
                QVERIFY2(!cardAt(document, copy).intersects(cardAt(document, original)),
                         qPrintable(copy + " was pasted onto " + original));
        document.undoStack()->undo();
        QCOMPARE(int(document.spec().nodes.size()), nodesBefore);
        QCOMPARE(int(canvas.edgeItems().size()), edgesBefore);
    }

    void nodeMenuDuplicatesCopiesRenamesAndDeletes() {
        DesignDocument document;
        document.loadPreset("lenet5");
        DesignArea area(&document);
        DesignerCanvas* canvas = area.canvas();
        const QString conv = QString::fromStdString(document.spec().nodes[1].name);
        auto menu = canvas->contextMenuAt(canvas->nodeItem(conv)->sceneBoundingRect().center());
        QCOMPARE(canvas->selectedNode(), conv);
        QCOMPARE(actionTexts(*menu), (QStringList{"Duplicate", "Copy", "Rename " + conv + "…", "Delete " + conv}));

        actionNamed(*menu, "Duplicate")->trigger();
        QVERIFY(document.hasNode(conv + "_2"));
        QCOMPARE(canvas->selectedNode(), conv + "_2");

        menu = canvas->contextMenuAt(canvas->nodeItem(conv)->sceneBoundingRect().center());
        actionNamed(*menu, "Rename " + conv + "…")->trigger();
        QCOMPARE(area.inspector()->node(), conv);
        QVERIFY(area.inspector()->nameEditor()->hasSelectedText());

        actionNamed(*menu, "Delete " + conv)->trigger();
        QVERIFY(!document.hasNode(conv));
    }

    void canvasMenuPastesAddsLayersAndFits() {
        DesignDocument document;
        document.newNetwork();
        DesignArea area(&document);
        DesignerCanvas* canvas = area.canvas();
        QApplication::clipboard()->clear();
        const QPointF empty(700, 500);
        auto menu = canvas->contextMenuAt(empty);
        QCOMPARE(actionTexts(*menu), (QStringList{"Paste here", "Add layer here", "Fit network"}));
        QVERIFY(!actionNamed(*menu, "Paste here")->isEnabled());

        QMenu* addLayer = actionNamed(*menu, "Add layer here")->menu();
        QVERIFY(addLayer);
        QAction* relu = nullptr;
        for (QAction* category : addLayer->actions())
            if (category->menu())
                if (QAction* found = actionNamed(*category->menu(), "ReLU")) relu = found;
        QVERIFY(relu);
        relu->trigger();
        QVERIFY(document.hasNode("relu1"));
        QCOMPARE(cardAt(document, "relu1").center(), empty);

        canvas->copySelection();
        menu = canvas->contextMenuAt(QPointF(1200, 900));
        QVERIFY(actionNamed(*menu, "Paste here")->isEnabled());
        actionNamed(*menu, "Paste here")->trigger();
        QCOMPARE(document.position("relu1_2"), QPointF(1200, 900));

        QSignalSpy fit(canvas, &DesignerCanvas::fitRequested);
        actionNamed(*menu, "Fit network")->trigger();
        QCOMPARE(fit.count(), 1);
    }

    void doubleClickedPaletteLayerLandsBelowTheSelectionInFreeSpace() {
        DesignDocument document;
        document.loadPreset("lenet5");
        DesignArea area(&document);
        area.canvas()->selectNode("input");
        QTreeWidgetItem* relu = paletteItem(*area.palette(), "ReLU");
        QVERIFY(relu);
        emit relu->treeWidget()->itemActivated(relu, 0);
        const QString added = area.canvas()->selectedNode();
        QVERIFY(added.startsWith("relu"));
        QVERIFY(cardAt(document, added).top() > cardAt(document, "input").bottom());
        for (const cnnstudio::NodeSpec& node : document.spec().nodes)
            if (QString::fromStdString(node.name) != added)
                QVERIFY2(!cardAt(document, added).intersects(cardAt(document, QString::fromStdString(node.name))),
                         qPrintable(added + " landed on " + QString::fromStdString(node.name)));
    }

    // Audit item 22: a layer double-clicked in the palette is fed by the selected node, and one
    // Undo takes back both the node and its edge. With nothing selected it stays unconnected.
    void doubleClickedPaletteLayerIsConnectedAfterTheSelectionInOneUndoStep() {
        DesignDocument document;
        document.newNetwork();
        DesignArea area(&document);
        const QString input = QString::fromStdString(document.spec().nodes.front().name);
        area.canvas()->selectNode(input);
        QTreeWidgetItem* conv = paletteItem(*area.palette(), "Conv2D");
        QVERIFY(conv);
        const int undoStepsBefore = document.undoStack()->count();
        emit conv->treeWidget()->itemActivated(conv, 0);
        const QString added = area.canvas()->selectedNode();
        QVERIFY(added.startsWith("conv2d"));
        QCOMPARE(document.spec().find(added.toStdString())->inputs, std::vector<std::string>{input.toStdString()});
        QCOMPARE(document.undoStack()->count(), undoStepsBefore + 1);

        document.undoStack()->undo();
        QVERIFY(!document.hasNode(added));
        document.undoStack()->redo();
        QCOMPARE(document.spec().find(added.toStdString())->inputs, std::vector<std::string>{input.toStdString()});

        area.canvas()->clearSelection();
        emit conv->treeWidget()->itemActivated(conv, 0);
        QVERIFY(document.spec().find(area.canvas()->selectedNode().toStdString())->inputs.empty());
    }

    void layerDroppedFromThePaletteLandsUnderTheMouse() {
        DesignDocument document;
        document.newNetwork();
        DesignerCanvas canvas(&document);
        auto* data = new QMimeData;
        data->setData(DesignerCanvas::layerMimeType, "Dense");
        QGraphicsSceneDragDropEvent drop(QEvent::GraphicsSceneDrop);
        drop.setMimeData(data);
        drop.setScenePos(QPointF(420, 333));
        drop.setProposedAction(Qt::CopyAction);
        drop.setPossibleActions(Qt::CopyAction);
        QCoreApplication::sendEvent(&canvas, &drop);
        QVERIFY(document.hasNode("dense1"));
        QCOMPARE(cardAt(document, "dense1").center(), QPointF(420, 333));
        delete data;
    }

    void placingHintIsClearedOncePlacedOrCancelled() {
        DesignDocument document;
        document.newNetwork();
        DesignArea area(&document);
        QSignalSpy messages(&area, &DesignArea::message);
        QTreeWidgetItem* relu = paletteItem(*area.palette(), "ReLU");
        emit relu->treeWidget()->itemClicked(relu, 0);
        QVERIFY(messages.last().first().toString().contains("Click on the canvas"));
        area.canvas()->cancelMode();
        QCOMPARE(messages.last().first().toString(), QString());

        emit relu->treeWidget()->itemClicked(relu, 0);
        QGraphicsSceneMouseEvent press(QEvent::GraphicsSceneMousePress);
        press.setScenePos(QPointF(300, 300));
        press.setButton(Qt::LeftButton);
        press.setButtons(Qt::LeftButton);
        QCoreApplication::sendEvent(area.canvas(), &press);
        QVERIFY(document.hasNode("relu1"));
        QCOMPARE(messages.last().first().toString(), QString());
    }

    void paletteToolTipsWrap() {
        cnnstudio::ui::LayerPalette palette;
        for (const cnnstudio::LayerTypeInfo& info : cnnstudio::layerTypes()) {
            QTreeWidgetItem* item = paletteItem(palette, QString::fromStdString(info.type));
            QVERIFY(item);
            // Qt wraps only rich-text tooltips; plain text stays on one line, off the screen.
            QVERIFY2(Qt::mightBeRichText(item->toolTip(0)), qPrintable(QString::fromStdString(info.type) + ": " + item->toolTip(0)));
        }
    }

    void aSkipEdgeGoesAroundTheCardsInItsWayUntilTheyMoveAway() {
        // input -> conv -> relu -> add, and input -> add: a line straight down would cut through
        // conv and relu.
        DesignDocument document;
        document.newNetwork();
        const QPointF column = document.position("input");
        const QString conv = document.addNode("Conv2D", column + QPointF(0, 150));
        const QString relu = document.addNode("ReLU", column + QPointF(0, 300));
        const QString add = document.addNode("Add", column + QPointF(0, 450));
        document.connectNodes("input", conv);
        document.connectNodes(conv, relu);
        document.connectNodes(relu, add);
        document.connectNodes("input", add);
        DesignerCanvas canvas(&document);
        cnnstudio::ui::EdgeItem* skip = skipEdge(canvas, add);
        QVERIFY(skip);
        for (const QString& passed : {conv, relu}) {
            const QRectF card = canvas.nodeItem(passed)->sceneBoundingRect();
            QVERIFY2(!crossingPoint(skip, card), qPrintable("the skip edge crosses " + passed));
        }
        const double columnRight = canvas.nodeItem(add)->sceneBoundingRect().right();
        QVERIFY(skip->mapToScene(skip->path()).boundingRect().right() > columnRight);

        // With the cards moved aside, the way down is clear again.
        document.moveNodes({{conv, column + QPointF(-400, 150)}, {relu, column + QPointF(-400, 300)}});
        QVERIFY(skip->mapToScene(skip->path()).boundingRect().right() < columnRight);
    }

    void edgesCrossingACardAreDrawnOverIt() {
        // input -> conv -> add, input -> add, and relu beside input, across the gap below it
        // where the skip edge turns towards its lane: no way around it there.
        DesignDocument document;
        document.newNetwork();
        const QPointF column = document.position("input");
        const QString conv = document.addNode("Conv2D", column + QPointF(0, 150));
        const QString relu = document.addNode("ReLU", column + QPointF(NodeMetrics::width / 2 + 15, 60));
        const QString add = document.addNode("Add", column + QPointF(0, 300));
        document.connectNodes("input", conv);
        document.connectNodes(conv, add);
        document.connectNodes("input", add);
        DesignerCanvas canvas(&document);
        cnnstudio::ui::EdgeItem* skip = skipEdge(canvas, add);
        QVERIFY(skip);
        const std::optional<QPointF> crossing = crossingPoint(skip, canvas.nodeItem(relu)->sceneBoundingRect());
        QVERIFY2(crossing, "the skip edge should cross the ReLU card in this layout");
        const QList<QGraphicsItem*> stack = canvas.items(*crossing, Qt::IntersectsItemShape, Qt::DescendingOrder);
        QVERIFY(!stack.isEmpty());
        QCOMPARE(stack.first(), static_cast<QGraphicsItem*>(skip));
    }

    void analysisTableListsEveryLayerWithItsCostsAndProblems() {
        DesignDocument document;
        document.loadPreset("fer-cnn");
        DesignArea area(&document);
        cnnstudio::ui::AnalysisTableModel* model = area.analysis()->model();
        const cnnstudio::ShapeReport& report = document.report();
        QCOMPARE(model->rowCount(), int(report.nodes.size()));
        using Column = cnnstudio::ui::AnalysisTableModel::Column;
        for (int row = 0; row < model->rowCount(); ++row) {
            const cnnstudio::NodeInfo& node = report.nodes[std::size_t(row)];
            QCOMPARE(model->index(row, Column::Layer).data().toString(), QString::fromStdString(node.name));
            QCOMPARE(model->index(row, Column::Parameters).data(model->sortRole).toLongLong(), qlonglong(node.parameters));
            QCOMPARE(model->index(row, Column::Flops).data(model->sortRole).toLongLong(), qlonglong(node.forwardFlops));
            QCOMPARE(model->index(row, Column::ActivationMemory).data(model->sortRole).toLongLong(),
                     qlonglong(node.outputShape.countPerImage() * 4));
            QVERIFY(model->index(row, Column::Problems).data().toString().isEmpty());
        }
        QVERIFY2(area.analysis()->totalsText().contains("parameters"), qPrintable(area.analysis()->totalsText()));

        // A broken edit shows up in the table at once, against its layer.
        QString firstConv;
        for (const cnnstudio::NodeSpec& node : document.spec().nodes)
            if (node.type == "Conv2D" && firstConv.isEmpty()) firstConv = QString::fromStdString(node.name);
        const QString add = document.addNode("Add", QPointF(2000, 0));
        document.connectNodes("input", add);
        document.connectNodes(firstConv, add);  // 1 channel and 64: the shapes differ
        const int row = model->rowOf(add);
        QVERIFY(row >= 0);
        QVERIFY2(!model->index(row, Column::Problems).data().toString().isEmpty(),
                 qPrintable(model->index(row, Column::Problems).data().toString()));

        // Double-clicking a row selects its layer.
        area.resize(1200, 800);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        area.showAnalysis();
        QTableView* table = area.analysis()->table();
        const QString third = model->layerAt(2);
        emit table->activated(table->model()->index(2, 0));
        QCOMPARE(area.canvas()->selectedNode(), third);
    }

    void networkNameIsEditedOnThePageAndNamesTheWindow() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = cnnstudio::ui::tests::testDataPath("runs");
        cnnstudio::ui::MainWindow window(options);
        QLineEdit* name = window.designArea()->networkNameEditor();
        QCOMPARE(name->text(), QString::fromStdString(window.document()->spec().name));
        name->setText("faces-v2");
        emit name->editingFinished();
        QCOMPARE(window.document()->spec().name, std::string("faces-v2"));
        QVERIFY2(window.windowTitle().startsWith("faces-v2"), qPrintable(window.windowTitle()));
        window.document()->undoStack()->undo();
        QCOMPARE(name->text(), QString("fer-cnn"));
    }

    void toolbarKeepsStillWhileTheUndoTextChanges() {
        cnnstudio::ui::MainWindowOptions options;
        options.persistSettings = false;
        options.runsRoot = cnnstudio::ui::tests::testDataPath("runs");
        cnnstudio::ui::MainWindow window(options);
        window.resize(1400, 880);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* bar = window.findChild<QToolBar*>("mainToolBar");
        QVERIFY(bar);
        auto positions = [&] {
            QList<QRect> geometries;
            for (QToolButton* button : bar->findChildren<QToolButton*>()) geometries << button->geometry();
            return geometries;
        };
        const QList<QRect> before = positions();
        window.document()->addNode("BatchNorm2D", QPointF(3000, 0));
        window.document()->setNetworkName("a-much-longer-network-name-than-before");
        QApplication::processEvents();
        QCOMPARE(positions(), before);
    }
};

CNNSTUDIO_GUI_TEST(DesignerEditingTest);

#include "designer_editing_test.moc"
