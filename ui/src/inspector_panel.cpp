#include "cnnstudio/ui/inspector_panel.h"

#include <climits>
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include "cnnstudio/error.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/design_document.h"
#include "cnnstudio/ui/formatting.h"
#include "layer_colors.h"

namespace cnnstudio::ui {
namespace {

bool hasBounds(const ParamInfo& param) { return param.minimum != param.maximum; }
// No default: the user must set it (unless it follows another parameter, like a pool's stride).
bool isRequired(const ParamInfo& param) { return param.defaultValue.is_null() && param.defaultsTo.empty(); }
// May be left unset: required ones (unset is an error) and ones following another parameter.
bool mayBeUnset(const ParamInfo& param) { return param.defaultValue.is_null(); }

// An int spin box honouring the catalogue's bounds. A parameter without a default value gets one
// extra step below its minimum that stands for "not set" and reads "required" (or "as kernel").
QSpinBox* boundedSpinBox(const ParamInfo& param, QWidget* parent) {
    auto* box = new QSpinBox(parent);
    int low = hasBounds(param) ? int(std::ceil(param.minimum)) : INT_MIN + 1;
    const int high = hasBounds(param) ? int(std::floor(param.maximum)) : INT_MAX;
    if (mayBeUnset(param)) {
        low -= 1;
        box->setSpecialValueText(isRequired(param) ? QObject::tr("required")
                                                   : QObject::tr("as %1").arg(QString::fromStdString(param.defaultsTo)));
    }
    box->setRange(low, high);
    box->setKeyboardTracking(false);
    box->setAccelerated(true);
    box->setMinimumWidth(56);  // the range's widest number would otherwise set the panel's width
    return box;
}

QString describe(const ParamInfo& param) {
    QString text = QString::fromStdString(param.help);
    if (hasBounds(param))
        text += QObject::tr(" (from %1 to %2)").arg(param.minimum).arg(param.maximum);
    if (isRequired(param)) text += QObject::tr(" — required");
    else if (!param.defaultsTo.empty()) text += QObject::tr(" — unset: the same as %1").arg(QString::fromStdString(param.defaultsTo));
    else text += QObject::tr(" — default %1").arg(QString::fromStdString(param.defaultValue.dump()));
    return text;
}

}  // namespace

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
    nameEdit_->setValidator(
        new QRegularExpressionValidator(QRegularExpression("[A-Za-z0-9_.\\-]+"), nameEdit_));
    nameEdit_->setToolTip(tr("The node's name, unique in the network: letters, digits, '_', '-', '.'"));
    nameForm->addRow(tr("Name"), nameEdit_);

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
    loaders_.clear();
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
    if (type) {
        for (const ParamInfo& param : type->params) {
            QWidget* editor = createEditor(param);
            editor->setObjectName("param:" + QString::fromStdString(param.name));
            editor->setToolTip(describe(param));
            auto* label = new QLabel(QString::fromStdString(param.name), paramsBox_);
            label->setToolTip(describe(param));
            paramsForm_->addRow(label, editor);
            editors_.insert(QString::fromStdString(param.name), editor);
        }
    }
    refreshValues();
    refreshInfo();
}

nlohmann::json InspectorPanel::currentValue(const ParamInfo& param) const {
    const NodeSpec* spec = document_->spec().find(node_.toStdString());
    if (spec && spec->params.is_object() && spec->params.contains(param.name)) return spec->params.at(param.name);
    return param.defaultValue;
}

void InspectorPanel::refreshValues() {
    const LayerTypeInfo* type = findLayerType(nodeType_.toStdString());
    if (!type) return;
    for (const ParamInfo& param : type->params) {
        const QString name = QString::fromStdString(param.name);
        if (auto loader = loaders_.value(name)) loader(currentValue(param));
    }
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

QWidget* InspectorPanel::createEditor(const ParamInfo& param) {
    const QString name = QString::fromStdString(param.name);

    if (param.kind == "int") {
        QSpinBox* box = boundedSpinBox(param, paramsBox_);
        loaders_.insert(name, [box](const nlohmann::json& value) {
            QSignalBlocker block(box);
            box->setValue(value.is_number() ? value.get<int>() : box->minimum());
        });
        connect(box, &QSpinBox::valueChanged, this, [this, name, box, unsettable = mayBeUnset(param)](int value) {
            commit(name, unsettable && value == box->minimum() ? nlohmann::json() : nlohmann::json(value));
        });
        return box;
    }

    if (param.kind == "bool") {
        auto* box = new QCheckBox(paramsBox_);
        loaders_.insert(name, [box](const nlohmann::json& value) {
            QSignalBlocker block(box);
            box->setChecked(value.is_boolean() && value.get<bool>());
        });
        connect(box, &QCheckBox::toggled, this, [this, name](bool on) { commit(name, on); });
        return box;
    }

    if (param.kind == "int-pair") {
        auto* row = new QWidget(paramsBox_);
        auto* layout = new QHBoxLayout(row);
        layout->setContentsMargins(0, 0, 0, 0);
        QSpinBox* height = boundedSpinBox(param, row);
        QSpinBox* width = boundedSpinBox(param, row);
        height->setObjectName("height");
        width->setObjectName("width");
        height->setToolTip(tr("height"));
        width->setToolTip(tr("width"));
        layout->addWidget(height, 1);
        layout->addWidget(new QLabel(QStringLiteral("×"), row));
        layout->addWidget(width, 1);
        loaders_.insert(name, [height, width](const nlohmann::json& value) {
            QSignalBlocker blockHeight(height), blockWidth(width);
            if (value.is_number()) {
                height->setValue(value.get<int>());
                width->setValue(value.get<int>());
            } else if (value.is_array() && value.size() == 2 && value[0].is_number() && value[1].is_number()) {
                height->setValue(value[0].get<int>());
                width->setValue(value[1].get<int>());
            } else {
                height->setValue(height->minimum());
                width->setValue(width->minimum());
            }
        });
        auto write = [this, name, height, width, unsettable = mayBeUnset(param)] {
            const bool unset = unsettable && (height->value() == height->minimum() || width->value() == width->minimum());
            if (unset) commit(name, nlohmann::json());
            else if (height->value() == width->value()) commit(name, height->value());
            else commit(name, nlohmann::json::array({height->value(), width->value()}));
        };
        connect(height, &QSpinBox::valueChanged, this, write);
        connect(width, &QSpinBox::valueChanged, this, write);
        return row;
    }

    if (param.kind == "padding") {
        auto* row = new QWidget(paramsBox_);
        auto* layout = new QHBoxLayout(row);
        layout->setContentsMargins(0, 0, 0, 0);
        auto* mode = new QComboBox(row);
        mode->setObjectName("mode");
        mode->addItem(tr("valid (none)"), "valid");
        mode->addItem(tr("same"), "same");
        mode->addItem(tr("explicit"), "explicit");
        const int most = hasBounds(param) ? int(param.maximum) : 1024;
        auto* height = new QSpinBox(row);
        auto* width = new QSpinBox(row);
        height->setObjectName("height");
        width->setObjectName("width");
        for (QSpinBox* box : {height, width}) {
            box->setRange(0, most);
            box->setKeyboardTracking(false);
            box->setMinimumWidth(48);
        }
        mode->setMinimumContentsLength(5);
        mode->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        height->setToolTip(tr("zero rows added above and below"));
        width->setToolTip(tr("zero columns added left and right"));
        layout->addWidget(mode, 2);
        layout->addWidget(height, 1);
        layout->addWidget(new QLabel(QStringLiteral("×"), row));
        layout->addWidget(width, 1);
        auto enableAmounts = [mode, height, width] {
            height->setEnabled(mode->currentIndex() == 2);
            width->setEnabled(mode->currentIndex() == 2);
        };
        loaders_.insert(name, [mode, height, width, enableAmounts](const nlohmann::json& value) {
            QSignalBlocker blockMode(mode), blockHeight(height), blockWidth(width);
            int rows = 0, columns = 0;
            if (value.is_number()) {
                mode->setCurrentIndex(2);
                rows = columns = value.get<int>();
            } else if (value.is_array() && value.size() == 2 && value[0].is_number() && value[1].is_number()) {
                mode->setCurrentIndex(2);
                rows = value[0].get<int>();
                columns = value[1].get<int>();
            } else {
                mode->setCurrentIndex(value.is_string() && value.get<std::string>() == "same" ? 1 : 0);
            }
            height->setValue(rows);
            width->setValue(columns);
            enableAmounts();
        });
        auto write = [this, name, mode, height, width, enableAmounts] {
            enableAmounts();
            const QString choice = mode->currentData().toString();
            if (choice != "explicit") commit(name, choice.toStdString());
            else if (height->value() == width->value()) commit(name, height->value());
            else commit(name, nlohmann::json::array({height->value(), width->value()}));
        };
        connect(mode, &QComboBox::currentIndexChanged, this, write);
        connect(height, &QSpinBox::valueChanged, this, write);
        connect(width, &QSpinBox::valueChanged, this, write);
        return row;
    }

    // "float", and any kind this version does not know (edited as JSON text).
    const bool isFloat = param.kind == "float";
    auto* field = new QLineEdit(paramsBox_);
    if (isFloat) {
        auto* validator = new QDoubleValidator(field);
        validator->setNotation(QDoubleValidator::ScientificNotation);
        if (hasBounds(param)) validator->setRange(param.minimum, param.maximum, 12);
        field->setValidator(validator);
    }
    field->setPlaceholderText(isRequired(param) ? tr("required") : QString::fromStdString(param.defaultValue.dump()));
    loaders_.insert(name, [field, isFloat](const nlohmann::json& value) {
        QSignalBlocker block(field);
        if (value.is_null()) field->clear();
        else if (isFloat && value.is_number()) field->setText(QString::number(value.get<double>(), 'g', 8));
        else field->setText(QString::fromStdString(value.dump()));
        field->setPalette(QPalette());
    });
    connect(field, &QLineEdit::textEdited, this, [field] {
        // Intermediate text (an unfinished number, out of bounds) shows red until it is fixed.
        QString text = field->text();
        int position = 0;
        const bool acceptable = !field->validator() || text.isEmpty() ||
                                field->validator()->validate(text, position) == QValidator::Acceptable;
        QPalette palette;
        if (!acceptable) palette.setColor(QPalette::Text, problemColor(palette));
        field->setPalette(palette);
    });
    connect(field, &QLineEdit::editingFinished, this, [this, name, field, isFloat] {
        const QString text = field->text().trimmed();
        if (text.isEmpty()) {
            commit(name, nlohmann::json());
            return;
        }
        if (isFloat) {
            bool ok = false;
            const double value = QLocale().toDouble(text, &ok);
            commit(name, ok ? value : text.toDouble());
            return;
        }
        const nlohmann::json parsed = nlohmann::json::parse(text.toStdString(), nullptr, false);
        if (parsed.is_discarded()) {
            emit editRefused(tr("%1: '%2' is not a JSON value").arg(name, text));
            refreshValues();
            return;
        }
        commit(name, parsed);
    });
    return field;
}

void InspectorPanel::refreshInfo() {
    const ShapeReport& report = document_->report();
    const QColor bad = problemColor(palette());
    if (node_.isEmpty()) {
        QString text = tr("<b>%1</b> nodes<br>%2 parameters<br>%3 per image<br>%4 of activations per image")
                           .arg(document_->spec().nodes.size())
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
