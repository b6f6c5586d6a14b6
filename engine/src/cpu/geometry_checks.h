// Input checks shared by the ops of the `cpu` backend: a bad geometry or a missing pointer
// becomes an Error naming the op and the offending value, never a oneDNN failure or a crash.
#pragma once

#include <string>

#include "cnnstudio/backend.h"

namespace cnnstudio::cpu {

// "cpu backend, convForward": the `where` of every error the backend throws.
std::string opWhere(const char* op);

void requirePointer(const void* pointer, const char* argument, const char* op);
void requirePositive(std::int64_t value, const char* what, const char* op);

// Output size must follow floor((in + 2 pad - kernel) / stride) + 1, as in PyTorch.
void checkConvGeometry(const ConvGeometry& g, const char* op);
void checkPoolGeometry(const PoolGeometry& g, const char* op);
void checkBatchNormGeometry(const BatchNormGeometry& g, const char* op);
void checkDenseGeometry(const DenseGeometry& g, const char* op);
void checkLossGeometry(const LossGeometry& g, const char* op);

}  // namespace cnnstudio::cpu
