#include "designer/param_editors.h"

#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleValidator>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalBlocker>
#include <QSpinBox>

#include "cnnstudio/layer_types.h"
#include "cnnstudio/spec.h"
#include "common/layer_colors.h"

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

// A row holding an editor's parts side by side, without margins of its own.
QHBoxLayout* rowLayout(QWidget* row) {
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    return layout;
}

// n or [h, w], as "int-pair" and explicit padding store them; nullopt for anything else.
std::optional<std::pair<int, int>> heightAndWidth(const nlohmann::json& value) {
    if (value.is_number()) return std::pair{value.get<int>(), value.get<int>()};
    if (value.is_array() && value.size() == 2 && value[0].is_number() && value[1].is_number())
        return std::pair{value[0].get<int>(), value[1].get<int>()};
    return std::nullopt;
}

// The stored form of a height and width: one number when they agree, else [h, w].
nlohmann::json pairValue(int height, int width) {
    return height == width ? nlohmann::json(height) : nlohmann::json::array({height, width});
}

class IntEditor : public ParamEditor {
public:
    IntEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks)
        : ParamEditor(boundedSpinBox(param, parent), std::move(hooks)), box_(static_cast<QSpinBox*>(widget())) {
        connect(box_, &QSpinBox::valueChanged, this, [this, unsettable = mayBeUnset(param)](int value) {
            commit(unsettable && value == box_->minimum() ? nlohmann::json() : nlohmann::json(value));
        });
    }

    void load(const nlohmann::json& value) override {
        const QSignalBlocker block(box_);
        box_->setValue(value.is_number() ? value.get<int>() : box_->minimum());
    }

private:
    QSpinBox* box_;
};

class BoolEditor : public ParamEditor {
public:
    BoolEditor(const ParamInfo&, QWidget* parent, ParamEditorHooks hooks)
        : ParamEditor(new QCheckBox(parent), std::move(hooks)), box_(static_cast<QCheckBox*>(widget())) {
        connect(box_, &QCheckBox::toggled, this, [this](bool on) { commit(on); });
    }

    void load(const nlohmann::json& value) override {
        const QSignalBlocker block(box_);
        box_->setChecked(value.is_boolean() && value.get<bool>());
    }

private:
    QCheckBox* box_;
};

// Height × width, each a bounded spin box; equal ones are stored as one number.
class IntPairEditor : public ParamEditor {
public:
    IntPairEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks)
        : ParamEditor(new QWidget(parent), std::move(hooks)),
          height_(boundedSpinBox(param, widget())),
          width_(boundedSpinBox(param, widget())),
          unsettable_(mayBeUnset(param)) {
        height_->setObjectName("height");
        width_->setObjectName("width");
        height_->setToolTip(tr("height"));
        width_->setToolTip(tr("width"));
        QHBoxLayout* layout = rowLayout(widget());
        layout->addWidget(height_, 1);
        layout->addWidget(new QLabel(QStringLiteral("×"), widget()));
        layout->addWidget(width_, 1);
        for (QSpinBox* box : {height_, width_}) connect(box, &QSpinBox::valueChanged, this, &IntPairEditor::write);
    }

    void load(const nlohmann::json& value) override {
        const QSignalBlocker blockHeight(height_), blockWidth(width_);
        const auto pair = heightAndWidth(value);
        height_->setValue(pair ? pair->first : height_->minimum());
        width_->setValue(pair ? pair->second : width_->minimum());
    }

private:
    void write() {
        const bool unset = unsettable_ && (height_->value() == height_->minimum() || width_->value() == width_->minimum());
        commit(unset ? nlohmann::json() : pairValue(height_->value(), width_->value()));
    }

    QSpinBox* height_;
    QSpinBox* width_;
    bool unsettable_;
};

// valid (none), same, or explicit rows × columns of zeros.
class PaddingEditor : public ParamEditor {
public:
    PaddingEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks)
        : ParamEditor(new QWidget(parent), std::move(hooks)),
          mode_(new QComboBox(widget())),
          height_(new QSpinBox(widget())),
          width_(new QSpinBox(widget())) {
        mode_->setObjectName("mode");
        mode_->addItem(tr("valid (none)"), "valid");
        mode_->addItem(tr("same"), "same");
        mode_->addItem(tr("explicit"), "explicit");
        mode_->setMinimumContentsLength(5);
        mode_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        const int most = hasBounds(param) ? int(param.maximum) : 1024;
        height_->setObjectName("height");
        width_->setObjectName("width");
        for (QSpinBox* box : {height_, width_}) {
            box->setRange(0, most);
            box->setKeyboardTracking(false);
            box->setMinimumWidth(48);
        }
        height_->setToolTip(tr("zero rows added above and below"));
        width_->setToolTip(tr("zero columns added left and right"));
        QHBoxLayout* layout = rowLayout(widget());
        layout->addWidget(mode_, 2);
        layout->addWidget(height_, 1);
        layout->addWidget(new QLabel(QStringLiteral("×"), widget()));
        layout->addWidget(width_, 1);
        connect(mode_, &QComboBox::currentIndexChanged, this, &PaddingEditor::write);
        for (QSpinBox* box : {height_, width_}) connect(box, &QSpinBox::valueChanged, this, &PaddingEditor::write);
    }

    void load(const nlohmann::json& value) override {
        const QSignalBlocker blockMode(mode_), blockHeight(height_), blockWidth(width_);
        const auto amounts = heightAndWidth(value);
        if (amounts) mode_->setCurrentIndex(explicitIndex);
        else mode_->setCurrentIndex(value.is_string() && value.get<std::string>() == "same" ? sameIndex : validIndex);
        height_->setValue(amounts ? amounts->first : 0);
        width_->setValue(amounts ? amounts->second : 0);
        enableAmounts();
    }

private:
    static constexpr int validIndex = 0, sameIndex = 1, explicitIndex = 2;

    // Rows and columns mean something only for explicit padding.
    void enableAmounts() {
        height_->setEnabled(mode_->currentIndex() == explicitIndex);
        width_->setEnabled(mode_->currentIndex() == explicitIndex);
    }

    void write() {
        enableAmounts();
        const QString choice = mode_->currentData().toString();
        commit(choice == "explicit" ? pairValue(height_->value(), width_->value()) : nlohmann::json(choice.toStdString()));
    }

    QComboBox* mode_;
    QSpinBox* height_;
    QSpinBox* width_;
};

// A text field committing on editing finished; intermediate text that its validator refuses
// (an unfinished number, one out of bounds) shows red until it is fixed. Empty text unsets.
class TextEditor : public ParamEditor {
public:
    TextEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks)
        : ParamEditor(new QLineEdit(parent), std::move(hooks)), field_(static_cast<QLineEdit*>(widget())) {
        field_->setPlaceholderText(isRequired(param) ? tr("required") : QString::fromStdString(param.defaultValue.dump()));
        connect(field_, &QLineEdit::textEdited, this, &TextEditor::markUnacceptableText);
        connect(field_, &QLineEdit::editingFinished, this, [this] {
            const QString text = field_->text().trimmed();
            if (text.isEmpty()) commit(nlohmann::json());
            else commitText(text);
        });
    }

    void load(const nlohmann::json& value) override {
        const QSignalBlocker block(field_);
        field_->setText(value.is_null() ? QString() : show(value));
        field_->setPalette(QPalette());
    }

protected:
    QLineEdit* field() const { return field_; }
    virtual QString show(const nlohmann::json& value) const = 0;
    virtual void commitText(const QString& text) = 0;

private:
    void markUnacceptableText() {
        QString text = field_->text();
        int position = 0;
        const bool acceptable = !field_->validator() || text.isEmpty() ||
                                field_->validator()->validate(text, position) == QValidator::Acceptable;
        QPalette palette;
        if (!acceptable) palette.setColor(QPalette::Text, problemColor(palette));
        field_->setPalette(palette);
    }

    QLineEdit* field_;
};

class FloatEditor : public TextEditor {
public:
    FloatEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks)
        : TextEditor(param, parent, std::move(hooks)) {
        auto* validator = new QDoubleValidator(field());
        validator->setNotation(QDoubleValidator::ScientificNotation);
        if (hasBounds(param)) validator->setRange(param.minimum, param.maximum, 12);
        field()->setValidator(validator);
    }

protected:
    QString show(const nlohmann::json& value) const override {
        return value.is_number() ? QString::number(value.get<double>(), 'g', 8) : QString::fromStdString(value.dump());
    }

    // The user's locale first ("0,5"), then the C form the validator also accepts.
    void commitText(const QString& text) override {
        bool ok = false;
        const double value = QLocale().toDouble(text, &ok);
        commit(ok ? value : text.toDouble());
    }
};

// For a kind this version does not know: the value as JSON text.
class JsonTextEditor : public TextEditor {
public:
    JsonTextEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks)
        : TextEditor(param, parent, std::move(hooks)), name_(QString::fromStdString(param.name)) {}

protected:
    QString show(const nlohmann::json& value) const override { return QString::fromStdString(value.dump()); }

    void commitText(const QString& text) override {
        const nlohmann::json parsed = nlohmann::json::parse(text.toStdString(), nullptr, false);
        if (parsed.is_discarded()) refuse(tr("%1: '%2' is not a JSON value").arg(name_, text));
        else commit(parsed);
    }

private:
    QString name_;
};

template <typename Editor>
ParamEditor* create(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks) {
    return new Editor(param, parent, std::move(hooks));
}

using ParamEditorFactory = ParamEditor* (*)(const ParamInfo&, QWidget*, ParamEditorHooks);

// One factory per ParamInfo::kind.
const std::map<std::string, ParamEditorFactory>& factoriesByKind() {
    static const std::map<std::string, ParamEditorFactory> factories = {
        {"int", create<IntEditor>},           {"float", create<FloatEditor>},     {"bool", create<BoolEditor>},
        {"int-pair", create<IntPairEditor>},  {"padding", create<PaddingEditor>},
    };
    return factories;
}

}  // namespace

ParamEditor::ParamEditor(QWidget* widget, ParamEditorHooks hooks)
    : QObject(widget), widget_(widget), hooks_(std::move(hooks)) {}

ParamEditor* createParamEditor(const ParamInfo& param, QWidget* parent, ParamEditorHooks hooks) {
    const auto& factories = factoriesByKind();
    const auto factory = factories.find(param.kind);
    return factory == factories.end() ? create<JsonTextEditor>(param, parent, std::move(hooks))
                                      : factory->second(param, parent, std::move(hooks));
}

QString describeParam(const ParamInfo& param) {
    QString text = QString::fromStdString(param.help);
    if (hasBounds(param))
        text += QObject::tr(" (from %1 to %2)").arg(param.minimum).arg(param.maximum);
    if (isRequired(param)) text += QObject::tr(" — required");
    else if (!param.defaultsTo.empty()) text += QObject::tr(" — unset: the same as %1").arg(QString::fromStdString(param.defaultsTo));
    else text += QObject::tr(" — default %1").arg(QString::fromStdString(param.defaultValue.dump()));
    return text;
}

}  // namespace cnnstudio::ui
