// MaxPool2D, AvgPool2D and GlobalAvgPool (an average pool over the whole image).
#include "layers/layer_makers.h"
#include "spec/layer_params.h"

namespace cnnstudio {
namespace {

class PoolLayer : public Layer {
public:
    PoolLayer(Backend& backend, const PoolGeometry& geometry) : backend_(backend), geometry_(geometry) {}

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        backend_.poolForward(geometry_, io.inputs[0], io.output);
    }

    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override {
        if (dx[0]) backend_.poolBackward(geometry_, io.inputs[0], io.output, dy, dx[0]);
    }

private:
    Backend& backend_;
    PoolGeometry geometry_;
};

}  // namespace

std::unique_ptr<Layer> makePool(Backend& backend, const NodeSpec& node, const Shapes& in,
                                const TensorShape& out) {
    PoolGeometry g;
    g.batch = in[0].batch, g.channels = in[0].channels;
    g.inHeight = in[0].height, g.inWidth = in[0].width;
    g.outHeight = out.height, g.outWidth = out.width;
    if (node.type == "GlobalAvgPool") {
        g.kind = PoolKind::Average;
        g.kernelHeight = g.strideHeight = in[0].height;
        g.kernelWidth = g.strideWidth = in[0].width;
    } else {
        g.kind = node.type == "MaxPool2D" ? PoolKind::Max : PoolKind::Average;
        PoolSettings settings = poolSettings(node);
        g.kernelHeight = settings.kernel.height, g.kernelWidth = settings.kernel.width;
        g.strideHeight = settings.stride.height, g.strideWidth = settings.stride.width;
        g.padHeight = settings.padding.height, g.padWidth = settings.padding.width;
    }
    return std::make_unique<PoolLayer>(backend, g);
}

}  // namespace cnnstudio
