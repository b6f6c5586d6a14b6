// Fully connected layer as PyTorch's Linear.
//   x (batch, inFeatures), w (outFeatures, inFeatures), bias (outFeatures) nullable,
//   y (batch, outFeatures)
//   forward:         y[n,o]  = bias[o] + sum_i x[n,i] w[o,i]
//   backward data:   dx[n,i] = sum_o dy[n,o] w[o,i]
//   backward weights dw[o,i] = sum_n dy[n,o] x[n,i],  dbias[o] = sum_n dy[n,o]
// Every sum runs in double (a flattened feature map makes inFeatures long); the inner loops walk
// rows of x, w and dw contiguously.
#include <algorithm>
#include <vector>

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {

void CpuRefBackend::doDenseForward(const DenseGeometry& g, const float* x, const float* w,
                                   const float* bias, float* y) {
    for (int n = 0; n < g.batch; ++n) {
        const float* xRow = x + std::int64_t(n) * g.inFeatures;
        for (int o = 0; o < g.outFeatures; ++o) {
            const float* wRow = w + std::int64_t(o) * g.inFeatures;
            double sum = bias ? bias[o] : 0.0;
            for (int i = 0; i < g.inFeatures; ++i) sum += double(xRow[i]) * wRow[i];
            y[std::int64_t(n) * g.outFeatures + o] = float(sum);
        }
    }
}

// Differentiates y[n,o] = ... + sum_i x[n,i] w[o,i] with respect to x.
void CpuRefBackend::doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                                        float* dx) {
    std::vector<double> row(std::size_t(g.inFeatures));
    for (int n = 0; n < g.batch; ++n) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int o = 0; o < g.outFeatures; ++o) {
            const double gradient = dy[std::int64_t(n) * g.outFeatures + o];
            const float* wRow = w + std::int64_t(o) * g.inFeatures;
            for (int i = 0; i < g.inFeatures; ++i) row[std::size_t(i)] += gradient * wRow[i];
        }
        float* dxRow = dx + std::int64_t(n) * g.inFeatures;
        for (int i = 0; i < g.inFeatures; ++i) dxRow[i] = float(row[std::size_t(i)]);
    }
}

// Differentiates y[n,o] = bias[o] + sum_i x[n,i] w[o,i] with respect to w and bias.
void CpuRefBackend::doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                           float* dw, float* dbias) {
    std::vector<double> row(std::size_t(g.inFeatures));
    for (int o = 0; o < g.outFeatures; ++o) {
        std::fill(row.begin(), row.end(), 0.0);
        double biasSum = 0.0;
        for (int n = 0; n < g.batch; ++n) {
            const double gradient = dy[std::int64_t(n) * g.outFeatures + o];
            const float* xRow = x + std::int64_t(n) * g.inFeatures;
            for (int i = 0; i < g.inFeatures; ++i) row[std::size_t(i)] += gradient * xRow[i];
            biasSum += gradient;
        }
        float* dwRow = dw + std::int64_t(o) * g.inFeatures;
        for (int i = 0; i < g.inFeatures; ++i) dwRow[i] = float(row[std::size_t(i)]);
        if (dbias) dbias[o] = float(biasSum);
    }
}

}  // namespace cnnstudio::cpu_ref
