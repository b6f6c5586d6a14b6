// The designer's model: building a network through DesignDocument's edits, the live shape
// analysis, refused edits, undo/redo of every kind of edit, save/load and auto-layout.
#include <QRectF>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/designer/auto_layout.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "gui_tests.h"

using cnnstudio::NetworkSpec;
using cnnstudio::ui::DesignDocument;

namespace {

// input (1x28x28) -> conv (8 filters, 3x3, same) -> relu -> flatten -> dense (10 units)
struct SmallNetwork {
    QString conv, relu, flatten, dense;
};

SmallNetwork buildSmallNetwork(DesignDocument& document) {
    document.newNetwork();
    SmallNetwork net;
    net.conv = document.addNode("Conv2D", {0, 150});
    document.setParam(net.conv, "filters", 8);
    document.setParam(net.conv, "kernel", 3);
    document.setParam(net.conv, "padding", "same");
    document.connectNodes("input", net.conv);
    net.relu = document.addNode("ReLU", {0, 300});
    document.connectNodes(net.conv, net.relu);
    net.flatten = document.addNode("Flatten", {0, 450});
    document.connectNodes(net.relu, net.flatten);
    net.dense = document.addNode("Dense", {0, 600});
    document.setParam(net.dense, "units", 10);
    document.connectNodes(net.flatten, net.dense);
    return net;
}

std::string dumped(const DesignDocument& document) { return document.spec().toJson().dump(); }

}  // namespace

class DesignDocumentTest : public QObject {
    Q_OBJECT

private slots:
    void smallNetworkIsAnnotatedWithShapesParametersAndFlops() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        const cnnstudio::ShapeReport& report = document.report();
        QVERIFY2(report.ok(), report.problems.empty() ? "" : report.problems.front().second.c_str());

        const cnnstudio::NodeInfo* conv = report.find(net.conv.toStdString());
        QVERIFY(conv);
        QCOMPARE(conv->outputShape.channels, 8);
        QCOMPARE(conv->outputShape.height, 28);
        QCOMPARE(conv->outputShape.width, 28);
        QCOMPARE(conv->parameters, std::int64_t(8 * 1 * 3 * 3 + 8));
        // 2 FLOPs per multiply-add over every output, plus the bias adds.
        QCOMPARE(conv->forwardFlops, std::int64_t(2) * 8 * 28 * 28 * 9 + 8 * 28 * 28);

        const cnnstudio::NodeInfo* dense = report.find(net.dense.toStdString());
        QVERIFY(dense);
        QCOMPARE(dense->outputShape.channels, 10);
        QCOMPARE(dense->parameters, std::int64_t(8 * 28 * 28 * 10 + 10));
        QCOMPARE(report.totalParameters, conv->parameters + dense->parameters);
    }

    void addOfMismatchedShapesIsReportedAgainstTheAddNode() {
        DesignDocument document;
        document.newNetwork();
        const QString narrow = document.addNode("Conv2D", {-150, 150});
        const QString wide = document.addNode("Conv2D", {150, 150});
        for (const auto& [node, filters] : {std::pair{narrow, 8}, std::pair{wide, 16}}) {
            document.setParam(node, "filters", filters);
            document.setParam(node, "kernel", 3);
            document.setParam(node, "padding", "same");
            document.connectNodes("input", node);
        }
        const QString add = document.addNode("Add", {0, 300});
        document.connectNodes(narrow, add);
        QSignalSpy analysed(&document, &DesignDocument::analysisChanged);
        document.connectNodes(wide, add);
        QCOMPARE(analysed.count(), 1);

        const cnnstudio::ShapeReport& report = document.report();
        QVERIFY(!report.ok());
        bool onAdd = false;
        for (const auto& [node, message] : report.problems)
            if (QString::fromStdString(node) == add) onAdd = true;
        QVERIFY2(onAdd, "the shape mismatch should be reported against the Add node");

        // Making the shapes agree clears it.
        document.setParam(wide, "filters", 8);
        QVERIFY(document.report().ok());
    }

    void refusedEditsChangeNothing() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        const std::string before = dumped(document);
        const int undoSteps = document.undoStack()->count();

        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.connectNodes(net.dense, net.conv));  // a cycle
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.connectNodes(net.conv, "input"));    // Input takes none
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.connectNodes(net.conv, net.conv));   // itself
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.connectNodes("input", net.conv));    // twice
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.renameNode(net.conv, net.relu));     // taken
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.renameNode(net.conv, "has space"));
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.addNode("NoSuchLayer", {}));
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.setParam("ghost", "filters", 3));

        QCOMPARE(dumped(document), before);
        QCOMPARE(document.undoStack()->count(), undoSteps);
    }

    void connectingASingleInputNodeReplacesItsInput() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        document.connectNodes(net.conv, net.flatten);  // flatten took relu; now conv
        QCOMPARE(document.spec().find(net.flatten.toStdString())->inputs,
                 std::vector<std::string>{net.conv.toStdString()});
        document.undoStack()->undo();
        QCOMPARE(document.spec().find(net.flatten.toStdString())->inputs,
                 std::vector<std::string>{net.relu.toStdString()});
    }

    void undoAndRedoReplayEveryKindOfEdit() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        document.undoStack()->clear();
        std::vector<std::string> states{dumped(document)};
        auto record = [&] { states.push_back(dumped(document)); };

        const QString dropout = document.addNode("Dropout", {200, 450});
        record();
        document.connectNodes(net.relu, dropout);
        record();
        document.setParam(dropout, "rate", 0.25);
        record();
        document.renameNode(dropout, "drop");
        record();
        document.moveNodes({{"drop", QPointF(260, 470)}, {net.dense, QPointF(10, 640)}});
        record();
        document.disconnectNodes(net.relu, "drop");
        record();
        document.removeNodes({net.flatten});  // and its edges in and out
        record();
        QVERIFY(document.spec().find(net.dense.toStdString())->inputs.empty());
        document.autoLayout();
        record();

        QCOMPARE(document.undoStack()->count(), int(states.size()) - 1);
        for (std::size_t i = states.size() - 1; i > 0; --i) {
            document.undoStack()->undo();
            QCOMPARE(dumped(document), states[i - 1]);
        }
        for (std::size_t i = 1; i < states.size(); ++i) {
            document.undoStack()->redo();
            QCOMPARE(dumped(document), states[i]);
        }
    }

    void consecutiveChangesOfOneParameterAreOneUndoStep() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        const int steps = document.undoStack()->count();
        for (int filters : {9, 10, 11, 12}) document.setParam(net.conv, "filters", filters);
        QCOMPARE(document.undoStack()->count(), steps + 1);
        document.undoStack()->undo();
        QCOMPARE(document.spec().find(net.conv.toStdString())->params.at("filters").get<int>(), 8);
    }

    void saveThenOpenGivesTheSameSpecAndLayout() {
        QTemporaryDir folder;
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        document.moveNodes({{net.relu, QPointF(123.5, 321.25)}});
        QVERIFY(document.isModified());
        const QString file = folder.filePath("small.json");
        document.save(file);
        QVERIFY(!document.isModified());
        QCOMPARE(document.filePath(), file);

        DesignDocument reopened;
        reopened.open(file);
        QVERIFY(reopened.spec() == document.spec());
        QCOMPARE(reopened.position(net.relu), QPointF(123.5, 321.25));
        QCOMPARE(reopened.undoStack()->count(), 0);
    }

    void everyPresetLoadsLaidOutAndRoundTrips() {
        QTemporaryDir folder;
        for (const std::string& name : cnnstudio::presetNames()) {
            DesignDocument document;
            document.loadPreset(QString::fromStdString(name));
            QVERIFY2(document.report().ok(), name.c_str());
            for (const cnnstudio::NodeSpec& node : document.spec().nodes)
                QVERIFY2(document.spec().layout.count(node.name), (name + ": " + node.name + " has no position").c_str());
            const QString file = folder.filePath(QString::fromStdString(name) + ".json");
            document.save(file);
            DesignDocument reopened;
            reopened.open(file);
            QVERIFY2(reopened.spec() == document.spec(), name.c_str());
        }
    }

    void openingAMissingFileNamesIt() {
        DesignDocument document;
        try {
            document.open("/nonexistent/network.json");
            QFAIL("opening a missing file should throw");
        } catch (const cnnstudio::Error& error) {
            QVERIFY2(QString(error.what()).contains("/nonexistent/network.json"), error.what());
        }
    }

    void autoLayoutPutsEachNodeBelowItsInputsOrAtTheHeadOfALaterColumn() {
        using cnnstudio::ui::NodeMetrics;
        for (const std::string& preset : cnnstudio::presetNames()) {
            DesignDocument document;
            document.loadPreset(QString::fromStdString(preset));
            document.moveNodes({{"input", QPointF(900, 900)}});
            document.autoLayout();
            const NetworkSpec& spec = document.spec();
            for (const cnnstudio::NodeSpec& node : spec.nodes)
                for (const std::string& input : node.inputs) {
                    const auto [x, y] = spec.layout.at(node.name);
                    const auto [inputX, inputY] = spec.layout.at(input);
                    const bool below = y > inputY;
                    const bool headOfLaterColumn = y == 0 && x >= inputX + NodeMetrics::width + NodeMetrics::columnGap;
                    QVERIFY2(below || headOfLaterColumn,
                             (preset + ": " + node.name + " should sit below " + input + " or head a later column").c_str());
                }
            // No two cards overlap, nor touch: the layout's gaps stay between them.
            for (const auto& [a, pa] : spec.layout)
                for (const auto& [b, pb] : spec.layout) {
                    const QRectF cardA(pa.first, pa.second, NodeMetrics::width, NodeMetrics::height);
                    const QRectF cardB(pb.first, pb.second, NodeMetrics::width, NodeMetrics::height);
                    QVERIFY2(a >= b || !cardA.adjusted(-1, -1, 1, 1).intersects(cardB),
                             (preset + ": " + a + " overlaps " + b).c_str());
                }
        }
    }

    void autoLayoutWrapsALongChainToBeReadableWhenFitted() {
        using cnnstudio::ui::LayoutTarget;
        using cnnstudio::ui::NodeMetrics;
        DesignDocument document;
        document.loadPreset("fer-cnn");  // 27 layers in one chain
        QRectF drawing;
        QSet<double> columns;
        for (const auto& [name, position] : document.spec().layout) {
            drawing |= QRectF(position.first, position.second, NodeMetrics::width, NodeMetrics::height);
            columns.insert(position.first);
        }
        QVERIFY2(columns.size() > 1, "a long chain should wrap into several columns");
        const double zoom = std::min(LayoutTarget::canvasWidth / (drawing.width() + 60),
                                     LayoutTarget::canvasHeight / (drawing.height() + 60));
        QVERIFY2(zoom >= 0.55, qPrintable(QString("fitted at %1").arg(zoom)));  // in one column: 0.13
        // The Auto layout button gives a loaded preset the layout it was loaded with.
        const auto loaded = document.spec().layout;
        document.autoLayout();
        QVERIFY(document.spec().layout == loaded);
    }

    void autoLayoutKeepsAShortChainInOneColumn() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        document.autoLayout();
        for (const QString& node : {net.conv, net.relu, net.flatten, net.dense})
            QCOMPARE(document.position(node).x(), document.position("input").x());
    }

    void copyKeepsOnlyTheEdgesInsideTheSelectionAndNoInput() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        const NetworkSpec fragment = document.copyNodes({"input", net.conv, net.relu, net.dense});
        QCOMPARE(int(fragment.nodes.size()), 3);  // the Input is left out
        QCOMPARE(fragment.find(net.conv.toStdString())->inputs, std::vector<std::string>{});
        QCOMPARE(fragment.find(net.relu.toStdString())->inputs, std::vector<std::string>{net.conv.toStdString()});
        QCOMPARE(fragment.find(net.dense.toStdString())->inputs, std::vector<std::string>{});  // flatten not copied
        QVERIFY(fragment.find(net.conv.toStdString())->params == document.spec().find(net.conv.toStdString())->params);
        QVERIFY(fragment.layout.count(net.relu.toStdString()));
    }

    void pasteRenamesTakenNamesKeepsInternalEdgesAndUndoesAsOneStep() {
        DesignDocument document;
        const SmallNetwork net = buildSmallNetwork(document);
        const std::string before = dumped(document);
        const int steps = document.undoStack()->count();
        const NetworkSpec fragment = document.copyNodes({net.conv, net.relu});
        const QStringList pasted = document.pasteNodes(fragment, QPointF(600, 150));
        QCOMPARE(pasted, (QStringList{net.conv + "_2", net.relu + "_2"}));
        QCOMPARE(document.undoStack()->count(), steps + 1);
        QCOMPARE(document.spec().find((net.relu + "_2").toStdString())->inputs,
                 std::vector<std::string>{(net.conv + "_2").toStdString()});
        QCOMPARE(document.position(net.conv + "_2"), QPointF(600, 150));
        QCOMPARE(document.position(net.relu + "_2") - document.position(net.conv + "_2"),
                 document.position(net.relu) - document.position(net.conv));

        // A copy of a copy counts on instead of stacking suffixes.
        const QStringList again = document.pasteNodes(document.copyNodes({net.conv + "_2"}), QPointF(900, 150));
        QCOMPARE(again, QStringList{net.conv + "_3"});

        document.undoStack()->undo();
        document.undoStack()->undo();
        QCOMPARE(dumped(document), before);
    }

    void duplicateLandsBesideTheOriginalsOverlappingNothing() {
        DesignDocument document;
        document.loadPreset("lenet5");
        QStringList all;
        for (const cnnstudio::NodeSpec& node : document.spec().nodes) all << QString::fromStdString(node.name);
        const QStringList copies = document.duplicateNodes(all);
        QCOMPARE(copies.size(), all.size() - 1);  // all but the Input
        const double width = cnnstudio::ui::NodeMetrics::width, height = cnnstudio::ui::NodeMetrics::height;
        for (const QString& copy : copies)
            for (const QString& original : all) {
                const QRectF a(document.position(copy), QSizeF(width, height));
                const QRectF b(document.position(original), QSizeF(width, height));
                QVERIFY2(!a.intersects(b), qPrintable(copy + " lands on " + original));
            }
    }

    void placeBelowFindsFreeSpaceUnderTheAnchor() {
        DesignDocument document;
        document.newNetwork();
        const QPointF first = document.placeBelow("input");
        QVERIFY(first.y() >= document.position("input").y() + cnnstudio::ui::NodeMetrics::height);
        document.addNode("ReLU", first);
        const QPointF second = document.placeBelow("input");
        QVERIFY(second != first);  // that place is taken now
        QVERIFY(!QRectF(second, QSizeF(cnnstudio::ui::NodeMetrics::width, cnnstudio::ui::NodeMetrics::height))
                     .intersects(QRectF(first, QSizeF(cnnstudio::ui::NodeMetrics::width,
                                                     cnnstudio::ui::NodeMetrics::height))));
    }

    void networkNameIsAnUndoableEdit() {
        DesignDocument document;
        document.newNetwork();
        QSignalSpy renamed(&document, &DesignDocument::networkNameChanged);
        document.setNetworkName("  faces-small ");
        QCOMPARE(document.spec().name, std::string("faces-small"));
        QCOMPARE(renamed.count(), 1);
        QVERIFY(document.isModified());
        QVERIFY_THROWS_EXCEPTION(cnnstudio::Error, document.setNetworkName("   "));
        document.undoStack()->undo();
        QCOMPARE(document.spec().name, std::string("untitled"));
        QCOMPARE(renamed.last().first().toString(), QString("untitled"));
    }
};

CNNSTUDIO_GUI_TEST(DesignDocumentTest);

#include "design_document_test.moc"
