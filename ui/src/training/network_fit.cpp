#include "cnnstudio/ui/training/network_fit.h"

#include <QFileInfo>
#include <QObject>

#include "cnnstudio/error.h"
#include "cnnstudio/shape_inference.h"
#include "training/spec_adaptation.h"

namespace cnnstudio::ui {
namespace {

const NodeSpec* inputNode(const NetworkSpec& spec) {
    for (const NodeSpec& node : spec.nodes)
        if (node.type == "Input") return &node;
    return nullptr;
}

int intParam(const NodeSpec& node, const char* name) {
    const auto it = node.params.find(name);
    return it != node.params.end() && it->is_number_integer() ? it->get<int>() : 0;
}

// The classifier layer the adaptation changed: the Dense (units) or Conv2D (filters) whose
// parameters differ between the drawn network and the fitted one.
QString classifierChange(const NetworkSpec& drawn, const NetworkSpec& fitted) {
    for (const NodeSpec& node : fitted.nodes) {
        if (node.type != "Dense" && node.type != "Conv2D") continue;
        const NodeSpec* before = drawn.find(node.name);
        const char* count = node.type == "Dense" ? "units" : "filters";
        if (!before || intParam(*before, count) == intParam(node, count)) continue;
        return QObject::tr("layer '%1': %2 %3 instead of %4, one per class")
            .arg(QString::fromStdString(node.name))
            .arg(intParam(node, count))
            .arg(QString::fromLatin1(count))
            .arg(intParam(*before, count));
    }
    return {};
}

QString inputChange(const NetworkSpec& drawn, const NetworkSpec& fitted) {
    const NodeSpec* before = inputNode(drawn);
    const NodeSpec* after = inputNode(fitted);
    if (!before || !after || before->params == after->params) return {};
    return QObject::tr("input: %1 images instead of %2")
        .arg(imageSizeText(intParam(*after, "channels"), intParam(*after, "height"), intParam(*after, "width")),
             imageSizeText(intParam(*before, "channels"), intParam(*before, "height"), intParam(*before, "width")));
}

// The data set as the user knows it: its kind and the file or folder's name, never a path.
QString datasetName(const QString& datasetSpec) {
    const QString kind = datasetSpec.section(':', 0, 0);
    const QString place = QFileInfo(datasetSpec.section(':', 1)).fileName();
    if (kind == "fashion-mnist") return QStringLiteral("Fashion-MNIST");
    if (kind == "fer2013") return QObject::tr("FER2013 (%1)").arg(place);
    return place.isEmpty() ? datasetSpec : place;
}

}  // namespace

QString imageSizeText(int channels, int height, int width) {
    const QString size = QStringLiteral("%1×%2").arg(height).arg(width);
    if (channels == 1) return QObject::tr("%1 grey").arg(size);
    if (channels == 3) return QObject::tr("%1 colour").arg(size);
    return QObject::tr("%1, %2 channels").arg(size).arg(channels);
}

NetworkFit fitNetworkToData(const NetworkSpec& spec, const QString& datasetSpec, const DatasetSummary& data) {
    NetworkFit fit;
    fit.datasetName = datasetName(datasetSpec);
    if (data.classNames.isEmpty() || spec.nodes.empty()) return fit;
    fit.known = true;
    const NodeSpec* input = inputNode(spec);
    if (!input) {
        fit.refusal = QObject::tr("The network has no Input node: add one on the Design page.");
        return fit;
    }
    // The image-folder loader resizes every image to what the Input node asks for.
    const bool resizedToNetwork = datasetSpec.startsWith(QStringLiteral("folder:"));
    const int channels = resizedToNetwork ? intParam(*input, "channels") : data.channels;
    const int height = resizedToNetwork ? intParam(*input, "height") : data.height;
    const int width = resizedToNetwork ? intParam(*input, "width") : data.width;
    const int classes = int(data.classNames.size());

    AdaptedSpec fitted;
    try {
        fitted = adaptSpecToData(spec, channels, height, width, classes);
    } catch (const Error& error) {
        fit.refusal = QObject::tr("This network cannot be trained on %1 (%2 images, %n class(es)): %3. "
                                  "Change it on the Design page.", nullptr, classes)
                          .arg(fit.datasetName, imageSizeText(channels, height, width),
                               QString::fromStdString(error.what()));
        return fit;
    }
    const ShapeReport report = analyseSpec(fitted.spec);
    if (!report.ok()) return fit;  // the Design page lists the network's own problems
    if (report.outputShape.countPerImage() != classes) {
        fit.refusal = QObject::tr("The network ends in %1 values per image, but %2 has %n class(es): it needs a "
                                  "classifier head — Flatten or GlobalAvgPool, then a Dense layer with one unit per "
                                  "class. Add one on the Design page.", nullptr, classes)
                          .arg(report.outputShape.countPerImage())
                          .arg(fit.datasetName);
        return fit;
    }
    for (const QString& change : {inputChange(spec, fitted.spec), classifierChange(spec, fitted.spec)})
        if (!change.isEmpty()) fit.changes << change;
    fit.trainedSpec = std::move(fitted.spec);
    fit.fitted = report;
    return fit;
}

}  // namespace cnnstudio::ui
