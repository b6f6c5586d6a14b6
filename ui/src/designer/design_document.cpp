#include "cnnstudio/ui/designer/design_document.h"

#include <algorithm>
#include <functional>
#include <set>

#include <QRegularExpression>
#include <QUndoStack>

#include "cnnstudio/error.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/ui/designer/auto_layout.h"
#include "designer/design_commands.h"

namespace cnnstudio::ui {
namespace {

std::string str(const QString& text) { return text.toStdString(); }
QString qstr(const std::string& text) { return QString::fromStdString(text); }
std::string nodeWhere(const QString& node) { return "node '" + str(node) + "'"; }

// Gives nodes without a drawing position one from the auto-layout, shifted to the right of
// the nodes that have one so they never land on top of them.
void placeUnpositionedNodes(NetworkSpec& spec) {
    std::vector<std::string> missing;
    for (const NodeSpec& node : spec.nodes)
        if (!spec.layout.count(node.name)) missing.push_back(node.name);
    if (missing.empty()) return;
    const auto automatic = layeredLayout(spec);
    double shiftX = 0;
    if (missing.size() != spec.nodes.size()) {
        double rightmostPlaced = -1e300, leftmostAutomatic = 1e300;
        for (const auto& [name, position] : spec.layout)
            if (spec.find(name)) rightmostPlaced = std::max(rightmostPlaced, position.first + NodeMetrics::width);
        for (const std::string& name : missing)
            leftmostAutomatic = std::min(leftmostAutomatic, automatic.at(name).first);
        shiftX = rightmostPlaced + NodeMetrics::horizontalGap * 2 - leftmostAutomatic;
    }
    for (const std::string& name : missing) {
        auto [x, y] = automatic.at(name);
        spec.layout[name] = {x + shiftX, y};
    }
}

}  // namespace

DesignDocument::DesignDocument(QObject* parent) : QObject(parent), undoStack_(new QUndoStack(this)) {
    connect(undoStack_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
    newNetwork();
}

bool DesignDocument::isModified() const { return !undoStack_->isClean(); }

QPointF DesignDocument::position(const QString& node) const {
    auto it = spec_.layout.find(str(node));
    return it == spec_.layout.end() ? QPointF() : QPointF(it->second.first, it->second.second);
}

bool DesignDocument::hasNode(const QString& node) const { return spec_.find(str(node)) != nullptr; }

void DesignDocument::reset(NetworkSpec spec, const QString& filePath) {
    for (auto it = spec.layout.begin(); it != spec.layout.end();)
        it = spec.find(it->first) ? std::next(it) : spec.layout.erase(it);
    placeUnpositionedNodes(spec);
    spec_ = std::move(spec);
    undoStack_->clear();
    undoStack_->setClean();
    filePath_ = filePath;
    report_ = analyseSpec(spec_);
    emit documentReset();
    emit specChanged();
    emit analysisChanged();
    emit filePathChanged(filePath_);
    emit modifiedChanged(false);
}

void DesignDocument::newNetwork() {
    NetworkSpec spec;
    spec.name = "untitled";
    NodeSpec input;
    input.name = "input";
    input.type = "Input";
    // The Input has no defaults; start with the images of the default data set (Fashion-MNIST).
    input.params = {{"channels", 1}, {"height", 28}, {"width", 28}};
    spec.nodes.push_back(input);
    spec.layout[input.name] = {-NodeMetrics::width / 2, 0.0};
    reset(std::move(spec));
}

void DesignDocument::loadPreset(const QString& name) {
    // A preset's stored positions are for some other drawing's node size; lay it out for ours.
    NetworkSpec preset = cnnstudio::loadPreset(str(name));
    preset.layout.clear();
    reset(std::move(preset));
}

void DesignDocument::open(const QString& path) { reset(NetworkSpec::load(str(path)), path); }

void DesignDocument::save(const QString& path) {
    spec_.save(str(path));
    undoStack_->setClean();
    if (filePath_ != path) {
        filePath_ = path;
        emit filePathChanged(filePath_);
    }
}

QString DesignDocument::addNode(const QString& type, QPointF position, const QString& after) {
    const LayerTypeInfo* info = findLayerType(str(type));
    if (!info)
        throw Error("unknown layer type '" + str(type) + "'", "", "pick a layer from the palette");
    if (!after.isEmpty()) nodeOrThrow(after);
    DocumentEdit::RemovedNode added;
    added.index = int(spec_.nodes.size());
    added.node.name = str(uniqueNodeName(type));
    added.node.type = info->type;
    for (const ParamInfo& param : info->params)
        if (!param.defaultValue.is_null()) added.node.params[param.name] = param.defaultValue;
    // The node arrives with its input edge, so adding and connecting undo as one step.
    if (!after.isEmpty() && info->maxInputs != 0) added.node.inputs = {str(after)};
    added.position = position;
    undoStack_->push(new InsertNodeCommand(*this, added));
    return qstr(added.node.name);
}

void DesignDocument::removeNodes(const QStringList& nodes) { removeItems(nodes, {}); }

void DesignDocument::removeItems(const QStringList& nodes, const QList<QPair<QString, QString>>& edges) {
    std::set<std::string> doomed;
    for (const QString& node : nodes) {
        nodeOrThrow(node);
        doomed.insert(str(node));
    }
    for (const auto& [from, to] : edges) {
        const NodeSpec& target = nodeOrThrow(to);
        if (std::find(target.inputs.begin(), target.inputs.end(), str(from)) == target.inputs.end())
            throw Error(str(from) + " is not connected to " + str(to), nodeWhere(to));
    }
    if (doomed.empty() && edges.isEmpty()) return;

    QString text = doomed.size() == 1 && edges.isEmpty() ? tr("Delete %1").arg(nodes.first())
                   : doomed.empty() && edges.size() == 1
                       ? tr("Disconnect %1 → %2").arg(edges.first().first, edges.first().second)
                       : tr("Delete %n item(s)", nullptr, int(doomed.size()) + int(edges.size()));
    auto* macro = new QUndoCommand(text);
    // Surviving nodes lose their inputs from deleted nodes and the deleted edges, once each.
    for (const NodeSpec& node : spec_.nodes) {
        if (doomed.count(node.name)) continue;
        std::vector<std::string> kept;
        for (const std::string& input : node.inputs) {
            const bool edgeDeleted = std::any_of(edges.begin(), edges.end(), [&](const auto& edge) {
                return str(edge.first) == input && str(edge.second) == node.name;
            });
            if (!doomed.count(input) && !edgeDeleted) kept.push_back(input);
        }
        if (kept != node.inputs)
            new SetInputsCommand(*this, qstr(node.name), node.inputs, kept, text, macro);
    }
    for (const std::string& node : doomed) new EraseNodeCommand(*this, qstr(node), macro);
    undoStack_->push(macro);
}

void DesignDocument::moveNodes(const QHash<QString, QPointF>& newPositions) {
    QHash<QString, QPointF> before, after;
    for (auto it = newPositions.cbegin(); it != newPositions.cend(); ++it) {
        nodeOrThrow(it.key());
        const QPointF old = position(it.key());
        if (old == it.value()) continue;
        before.insert(it.key(), old);
        after.insert(it.key(), it.value());
    }
    if (after.isEmpty()) return;
    const QString text = after.size() == 1 ? tr("Move %1").arg(after.begin().key())
                                           : tr("Move %n node(s)", nullptr, int(after.size()));
    undoStack_->push(new MoveNodesCommand(*this, before, after, text));
}

void DesignDocument::connectNodes(const QString& from, const QString& to) {
    nodeOrThrow(from);
    NodeSpec& target = nodeOrThrow(to);
    if (from == to)
        throw Error("a node cannot feed itself", nodeWhere(to), "connect it to another node");
    const LayerTypeInfo* info = findLayerType(target.type);
    if (info && info->maxInputs == 0)
        throw Error("an " + target.type + " node takes no inputs", nodeWhere(to),
                    "connect its output to the next layer instead");
    if (std::find(target.inputs.begin(), target.inputs.end(), str(from)) != target.inputs.end())
        throw Error(str(from) + " is already connected to " + str(to), nodeWhere(to));

    // Refuse a connection that closes a cycle: does `to` already reach `from`?
    std::function<bool(const std::string&, std::set<std::string>&)> feeds =
        [&](const std::string& node, std::set<std::string>& seen) {
            if (node == str(to)) return true;
            if (!seen.insert(node).second) return false;
            const NodeSpec* spec = spec_.find(node);
            if (!spec) return false;
            for (const std::string& input : spec->inputs)
                if (feeds(input, seen)) return true;
            return false;
        };
    std::set<std::string> seen;
    if (feeds(str(from), seen))
        throw Error("connecting " + str(from) + " to " + str(to) + " would make a cycle", nodeWhere(to),
                    "a network flows one way: connect a node only to nodes below it");

    std::vector<std::string> inputs = target.inputs;
    QString text = tr("Connect %1 → %2").arg(from, to);
    if (info && info->maxInputs == 1 && !inputs.empty()) {
        text = tr("Connect %1 → %2 (replacing %3)").arg(from, to, qstr(inputs.front()));
        inputs = {str(from)};
    } else if (info && info->maxInputs > 0 && int(inputs.size()) >= info->maxInputs) {
        throw Error("an " + target.type + " node takes at most " + std::to_string(info->maxInputs) +
                        " inputs",
                    nodeWhere(to), "disconnect one of its inputs first");
    } else {
        inputs.push_back(str(from));
    }
    undoStack_->push(new SetInputsCommand(*this, to, target.inputs, inputs, text));
}

void DesignDocument::disconnectNodes(const QString& from, const QString& to) {
    nodeOrThrow(from);
    removeItems({}, {{from, to}});
}

void DesignDocument::setParam(const QString& node, const QString& param, const nlohmann::json& value) {
    const NodeSpec& target = nodeOrThrow(node);
    nlohmann::json after = target.params;
    if (value.is_null())
        after.erase(str(param));
    else
        after[str(param)] = value;
    if (after == target.params) return;
    undoStack_->push(new SetParamCommand(*this, node, param, target.params, after));
}

void DesignDocument::renameNode(const QString& oldName, const QString& newName) {
    nodeOrThrow(oldName);
    if (oldName == newName) return;
    if (newName.isEmpty())
        throw Error("a node needs a name", nodeWhere(oldName), "type one: letters, digits, '_', '-' and '.'");
    static const QRegularExpression allowed("^[A-Za-z0-9_.\\-]+$");
    if (!allowed.match(newName).hasMatch())
        throw Error("'" + str(newName) + "' is not a usable node name", nodeWhere(oldName),
                    "use letters, digits, '_', '-' and '.', no spaces");
    if (hasNode(newName))
        throw Error("another node is already called '" + str(newName) + "'", nodeWhere(oldName),
                    "pick a name no other node has");
    undoStack_->push(new RenameNodeCommand(*this, oldName, newName));
}

void DesignDocument::setNetworkName(const QString& name) {
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty())
        throw Error("a network needs a name", "network '" + spec_.name + "'",
                    "its runs and files are named after it; type one");
    if (trimmed == qstr(spec_.name)) return;
    undoStack_->push(new RenameNetworkCommand(*this, qstr(spec_.name), trimmed));
}

NetworkSpec DesignDocument::copyNodes(const QStringList& nodes) const {
    std::set<std::string> chosen;
    for (const QString& node : nodes) chosen.insert(str(node));
    NetworkSpec fragment;
    fragment.name = spec_.name;
    for (const NodeSpec& node : spec_.nodes) {
        if (!chosen.count(node.name) || node.type == "Input") continue;
        NodeSpec copy = node;
        copy.inputs.clear();
        for (const std::string& input : node.inputs)
            if (chosen.count(input) && spec_.find(input)->type != "Input") copy.inputs.push_back(input);
        fragment.nodes.push_back(copy);
        if (auto it = spec_.layout.find(node.name); it != spec_.layout.end()) fragment.layout[node.name] = it->second;
    }
    return fragment;
}

QStringList DesignDocument::pasteNodes(const NetworkSpec& fragment, QPointF topLeft, const QString& undoText) {
    for (const NodeSpec& node : fragment.nodes) {
        if (!findLayerType(node.type))
            throw Error("unknown layer type '" + node.type + "'", "node '" + node.name + "'",
                        "the copied network is from another version of CNN Studio");
        if (node.type == "Input")
            throw Error("a network has exactly one Input node", "node '" + node.name + "'",
                        "paste the layers after the input");
    }
    if (fragment.nodes.empty()) return {};
    QPointF fragmentTopLeft(1e300, 1e300);
    for (const auto& [name, position] : fragment.layout)
        fragmentTopLeft = QPointF(std::min(fragmentTopLeft.x(), position.first), std::min(fragmentTopLeft.y(), position.second));
    if (fragment.layout.empty()) fragmentTopLeft = QPointF(0, 0);

    // New names first, so edges inside the fragment can follow them.
    QHash<QString, QString> newNames;
    QSet<QString> taken;
    for (const NodeSpec& node : fragment.nodes) {
        const QString name = uniqueCopyName(qstr(node.name), taken);
        newNames.insert(qstr(node.name), name);
        taken.insert(name);
    }
    const QString text = !undoText.isEmpty() ? undoText : tr("Paste %n layer(s)", nullptr, int(fragment.nodes.size()));
    auto* macro = new QUndoCommand(text);
    QStringList added;
    for (std::size_t i = 0; i < fragment.nodes.size(); ++i) {
        DocumentEdit::RemovedNode inserted;
        inserted.index = int(spec_.nodes.size() + i);
        inserted.node = fragment.nodes[i];
        inserted.node.name = str(newNames.value(qstr(fragment.nodes[i].name)));
        inserted.node.inputs.clear();
        for (const std::string& input : fragment.nodes[i].inputs)
            if (newNames.contains(qstr(input))) inserted.node.inputs.push_back(str(newNames.value(qstr(input))));
        const auto position = fragment.layout.find(fragment.nodes[i].name);
        const QPointF original = position == fragment.layout.end()
                                     ? fragmentTopLeft + QPointF(0, double(i) * (NodeMetrics::height + NodeMetrics::verticalGap))
                                     : QPointF(position->second.first, position->second.second);
        inserted.position = original - fragmentTopLeft + topLeft;
        new InsertNodeCommand(*this, inserted, macro);
        added.append(qstr(inserted.node.name));
    }
    undoStack_->push(macro);
    return added;
}

QStringList DesignDocument::duplicateNodes(const QStringList& nodes) {
    const NetworkSpec fragment = copyNodes(nodes);
    if (fragment.nodes.empty()) return {};
    QRectF bounds;
    for (const NodeSpec& node : fragment.nodes) bounds = bounds.united(nodeRect(node.name));
    const QPointF place = freePlaceFor(bounds.translated(bounds.width() + NodeMetrics::horizontalGap, 0));
    return pasteNodes(fragment, place, tr("Duplicate %n layer(s)", nullptr, int(fragment.nodes.size())));
}

QPointF DesignDocument::freePlaceFor(const QRectF& wanted) const {
    const double step = NodeMetrics::width + NodeMetrics::horizontalGap;
    // Gaps count as occupied, so a placed card never touches another.
    const QMarginsF gap(NodeMetrics::horizontalGap / 2, NodeMetrics::verticalGap / 2, NodeMetrics::horizontalGap / 2,
                        NodeMetrics::verticalGap / 2);
    QRectF candidate = wanted;
    for (;;) {
        const bool overlaps = std::any_of(spec_.nodes.begin(), spec_.nodes.end(), [&](const NodeSpec& node) {
            return nodeRect(node.name).marginsAdded(gap).intersects(candidate);
        });
        if (!overlaps) return candidate.topLeft();
        candidate.translate(step, 0);
    }
}

QPointF DesignDocument::placeBelow(const QString& after) const {
    QRectF anchor;
    if (hasNode(after)) {
        anchor = nodeRect(str(after));
    } else {
        for (const NodeSpec& node : spec_.nodes)
            if (anchor.isNull() || nodeRect(node.name).bottom() > anchor.bottom()) anchor = nodeRect(node.name);
    }
    if (anchor.isNull()) return QPointF(-NodeMetrics::width / 2, 0);
    return freePlaceFor(anchor.translated(0, NodeMetrics::height + NodeMetrics::verticalGap));
}

QRectF DesignDocument::nodeRect(const std::string& node) const {
    return QRectF(position(qstr(node)), QSizeF(NodeMetrics::width, NodeMetrics::height));
}

void DesignDocument::autoLayout() {
    QHash<QString, QPointF> positions;
    for (const auto& [name, position] : layeredLayout(spec_))
        positions.insert(qstr(name), QPointF(position.first, position.second));
    QHash<QString, QPointF> before, after;
    for (auto it = positions.cbegin(); it != positions.cend(); ++it)
        if (position(it.key()) != it.value()) {
            before.insert(it.key(), position(it.key()));
            after.insert(it.key(), it.value());
        }
    if (!after.isEmpty()) undoStack_->push(new MoveNodesCommand(*this, before, after, tr("Auto layout")));
}

void DesignDocument::insertNodePrimitive(const RemovedNode& node) {
    const auto index = std::min<std::size_t>(std::size_t(std::max(node.index, 0)), spec_.nodes.size());
    spec_.nodes.insert(spec_.nodes.begin() + std::ptrdiff_t(index), node.node);
    spec_.layout[node.node.name] = {node.position.x(), node.position.y()};
    emit nodeAdded(qstr(node.node.name));
    reanalyse();
}

DesignDocument::RemovedNode DesignDocument::eraseNodePrimitive(const QString& node) {
    auto it = std::find_if(spec_.nodes.begin(), spec_.nodes.end(),
                           [&](const NodeSpec& n) { return n.name == str(node); });
    if (it == spec_.nodes.end()) throw Error("no such node", nodeWhere(node));
    RemovedNode removed{int(it - spec_.nodes.begin()), *it, position(node)};
    spec_.nodes.erase(it);
    spec_.layout.erase(str(node));
    emit nodeRemoved(node);
    reanalyse();
    return removed;
}

void DesignDocument::setInputsPrimitive(const QString& node, const std::vector<std::string>& inputs) {
    nodeOrThrow(node).inputs = inputs;
    emit nodeInputsChanged(node);
    reanalyse();
}

void DesignDocument::setParamsPrimitive(const QString& node, const nlohmann::json& params) {
    nodeOrThrow(node).params = params;
    emit nodeParamsChanged(node);
    reanalyse();
}

void DesignDocument::setPositionPrimitive(const QString& node, QPointF position) {
    nodeOrThrow(node);
    spec_.layout[str(node)] = {position.x(), position.y()};
    emit nodeMoved(node, position);
    emit specChanged();
}

void DesignDocument::renamePrimitive(const QString& oldName, const QString& newName) {
    const std::string from = str(oldName), to = str(newName);
    nodeOrThrow(oldName).name = to;
    for (NodeSpec& node : spec_.nodes)
        std::replace(node.inputs.begin(), node.inputs.end(), from, to);
    if (auto it = spec_.layout.find(from); it != spec_.layout.end()) {
        spec_.layout[to] = it->second;
        spec_.layout.erase(from);
    }
    emit nodeRenamed(oldName, newName);
    reanalyse();
}

void DesignDocument::setNetworkNamePrimitive(const QString& name) {
    spec_.name = str(name);
    emit networkNameChanged(name);
    emit specChanged();
}

NodeSpec& DesignDocument::nodeOrThrow(const QString& node) {
    if (NodeSpec* found = spec_.find(str(node))) return *found;
    throw Error("there is no node called '" + str(node) + "'", "network '" + spec_.name + "'",
                "the network may have changed; select the node again");
}

QString DesignDocument::uniqueNodeName(const QString& type) const {
    QString base = type.toLower();
    base.remove(QRegularExpression("[^a-z0-9]"));
    if (base.isEmpty()) base = "node";
    for (int suffix = 1;; ++suffix) {
        const QString candidate = base + QString::number(suffix);
        if (!hasNode(candidate)) return candidate;
    }
}

QString DesignDocument::uniqueCopyName(const QString& name, const QSet<QString>& alsoTaken) const {
    auto free = [&](const QString& candidate) { return !hasNode(candidate) && !alsoTaken.contains(candidate); };
    if (free(name)) return name;
    // conv1 -> conv1_2, and a copy of conv1_2 -> conv1_3: copies of copies do not pile up suffixes.
    static const QRegularExpression copySuffix("_(\\d+)$");
    QString base = name;
    int suffix = 2;
    if (const auto match = copySuffix.match(name); match.hasMatch()) {
        base = name.left(match.capturedStart());
        suffix = match.captured(1).toInt() + 1;
    }
    for (;; ++suffix)
        if (const QString candidate = QStringLiteral("%1_%2").arg(base).arg(suffix); free(candidate)) return candidate;
}

void DesignDocument::reanalyse() {
    emit specChanged();
    report_ = analyseSpec(spec_);
    emit analysisChanged();
}

}  // namespace cnnstudio::ui
