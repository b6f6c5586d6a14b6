#include "cnnstudio/ui/designer/inspector_panel.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "cnnstudio/error.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/designer/design_document.h"
#include "common/layer_colors.h"
#include "common/wheel_guard.h"
#include "designer/document_undo_keys.h"
#include "designer/param_editors.h"

namespace cnnstudio::ui {

InspectorPanel::InspectorPanel(DesignDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    auto* content = new QWidget;
    auto* column = new QVBoxLayout(content);

    title_ = new QLabel(content);
    QFont titleFont = title_->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    title_->setFont(titleFont);
    help_ = new QLabel(content);
    help_->setWordWrap(true);
    help_->setForegroundRole(QPalette::PlaceholderText);

    nameRow_ = new QWidget(content);
    auto* nameForm = new QFormLayout(nameRow_);
    nameForm->setContentsMargins(0, 0, 0, 0);
    nameEdit_ = new QLineEdit(nameRow_);
    nameEdit_->setObjectName("nodeName");
    // Empty passes the validator so that clearing the name still finishes the edit, which the
    // document refuses with a message and the field then shows the name again; a validator
    // refusing "" would leave the field blank, silently.
    nameEdit_->setValidator(
        new QRegularExpressionValidator(QRegularExpression("[A-Za-z0-9_.\\-]*"), nameEdit_));
    nameEdit_->setToolTip(tr("The node's name, unique in the network: letters, digits, '_', '-', '.'"));
    nameForm->addRow(tr("Name"), nameEdit_);
    giveUndoKeysToTheDocument(nameEdit_);

    paramsBox_ = new QWidget(content);
    paramsForm_ = new QFormLayout(paramsBox_);
    paramsForm_->setContentsMargins(0, 0, 0, 0);
    paramsForm_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    info_ = new QLabel(content);
    info_->setObjectName("nodeInfo");
    info_->setWordWrap(true);
    info_->setTextFormat(Qt::RichText);
    info_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    column->addWidget(title_);
    column->addWidget(help_);
    column->addWidget(nameRow_);
    column->addWidget(paramsBox_);
    column->addWidget(info_);
    column->addStretch(1);

    auto* scroll = new QScrollArea(this);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);

    connect(nameEdit_, &QLineEdit::editingFinished, this, [this] {
        if (node_.isEmpty() || nameEdit_->text() == node_) return;
        try {
            document_->renameNode(node_, nameEdit_->text());
        } catch (const Error& error) {
            nameEdit_->setText(node_);
            emit editRefused(QString::fromStdString(error.what()));
        }
    });
    connect(document_, &DesignDocument::documentReset, this, [this] { setNode({}); });
    connect(document_, &DesignDocument::nodeRemoved, this, [this](const QString& name) {
        if (name == node_) setNode({});
    });
    connect(document_, &DesignDocument::nodeRenamed, this, [this](const QString& from, const QString& to) {
        if (from != node_) return;
        node_ = to;
        QSignalBlocker block(nameEdit_);
        nameEdit_->setText(to);
    });
    connect(document_, &DesignDocument::nodeParamsChanged, this, [this](const QString& name) {
        if (name == node_) refreshValues();
    });
    connect(document_, &DesignDocument::analysisChanged, this, &InspectorPanel::refreshInfo);
    setNode({});
}

void InspectorPanel::setNode(const QString& name) {
    const NodeSpec* spec = document_->spec().find(name.toStdString());
    node_ = spec ? name : QString();
    nodeType_ = spec ? QString::fromStdString(spec->type) : QString();
    rebuild();
}

void InspectorPanel::rebuild() {
    editors_.clear();
    while (paramsForm_->rowCount() > 0) paramsForm_->removeRow(0);

    const bool showNode = !node_.isEmpty();
    nameRow_->setVisible(showNode);
    paramsBox_->setVisible(showNode);
    if (!showNode) {
        title_->setText(QString::fromStdString(document_->spec().name));
        help_->setText(document_->spec().description.empty()
                           ? tr("Select a node on the canvas to edit its parameters.")
                           : QString::fromStdString(document_->spec().description) + "\n\n" +
                                 tr("Select a node on the canvas to edit its parameters."));
        refreshInfo();
        return;
    }
    const LayerTypeInfo* type = findLayerType(nodeType_.toStdString());
    title_->setText(nodeType_);
    help_->setText(type ? QString::fromStdString(type->help) : tr("Unknown layer type."));
    {
        QSignalBlocker block(nameEdit_);
        nameEdit_->setText(node_);
    }
    if (type)
        for (const ParamInfo& param : type->params) addEditor(param);
    letWheelScrollPastUnfocusedFields(paramsBox_);
    refreshValues();
    refreshInfo();
}

nlohmann::json InspectorPanel::currentValue(const ParamInfo& param) const {
    const NodeSpec* spec = document_->spec().find(node_.toStdString());
    if (spec && spec->params.is_object() && spec->params.contains(param.name)) return spec->params.at(param.name);
    return param.defaultValue;
}

void InspectorPanel::addEditor(const ParamInfo& param) {
    const QString name = QString::fromStdString(param.name);
    ParamEditorHooks hooks;
    hooks.commit = [this, name](const nlohmann::json& value) { commit(name, value); };
    hooks.refuse = [this](const QString& why) {
        emit editRefused(why);
        refreshValues();
    };
    ParamEditor* editor = createParamEditor(param, paramsBox_, std::move(hooks));
    giveUndoKeysToTheDocument(editor->widget());
    editor->widget()->setObjectName("param:" + name);
    editor->widget()->setToolTip(describeParam(param));
    auto* label = new QLabel(name, paramsBox_);
    label->setToolTip(describeParam(param));
    paramsForm_->addRow(label, editor->widget());
    editors_.insert(name, editor);
}

QWidget* InspectorPanel::editorFor(const QString& param) const {
    const ParamEditor* editor = editors_.value(param);
    return editor ? editor->widget() : nullptr;
}

void InspectorPanel::refreshValues() {
    const LayerTypeInfo* type = findLayerType(nodeType_.toStdString());
    if (!type) return;
    for (const ParamInfo& param : type->params)
        if (ParamEditor* editor = editors_.value(QString::fromStdString(param.name))) editor->load(currentValue(param));
}

void InspectorPanel::commit(const QString& param, const nlohmann::json& value) {
    if (node_.isEmpty()) return;
    try {
        document_->setParam(node_, param, value);
    } catch (const Error& error) {
        emit editRefused(QString::fromStdString(error.what()));
        refreshValues();
    }
}

void InspectorPanel::refreshInfo() {
    const ShapeReport& report = document_->report();
    const QColor bad = problemColor(palette());
    if (node_.isEmpty()) {
        const qsizetype nodeCount = document_->spec().nodes.size();
        QString text = (nodeCount == 1 ? tr("<b>%1</b> node") : tr("<b>%1</b> nodes")).arg(nodeCount) +
                       tr("<br>%1 parameters<br>%2 per image<br>%3 of activations per image")
                           .arg(formatCount(report.totalParameters), formatFlops(report.totalForwardFlops),
                                formatBytes(report.activationBytesPerImage));
        if (!report.ok())
            text += QStringLiteral("<br><span style='color:%1'>%2</span>")
                        .arg(bad.name(), tr("%n problem(s): see the problems list", nullptr, int(report.problems.size())));
        info_->setText(text);
        return;
    }
    const NodeInfo* info = report.find(node_.toStdString());
    QStringList problems;
    for (const auto& [name, message] : report.problems)
        if (QString::fromStdString(name) == node_) problems.append(QString::fromStdString(message).toHtmlEscaped());
    QString text;
    if (info && problems.isEmpty() && info->outputShape.countPerImage() > 0)
        text = tr("Output <b>%1</b><br>%2 parameters<br>%3 per image")
                   .arg(formatShape(info->outputShape), formatCount(info->parameters), formatFlops(info->forwardFlops));
    else if (problems.isEmpty())
        text = tr("No output shape: an input of this node is broken.");
    if (!problems.isEmpty())
        text += QStringLiteral("<span style='color:%1'>%2</span>").arg(bad.name(), problems.join("<br>"));
    info_->setText(text);
}

}  // namespace cnnstudio::ui
