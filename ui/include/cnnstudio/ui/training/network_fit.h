// NetworkFit: what the worker changes in the designed network to train it on the chosen data
// set, known before Train is pressed. The worker trains a copy whose Input node takes the data
// set's images and whose classifier layer gives one score per class (cnnstudio/trainer.h); the
// Train page says so, and refuses a network that cannot be fitted, in words for the user. No
// widgets: NetworkFitNotice shows one.
#pragma once

#include <QString>
#include <QStringList>

#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/training/dataset_preview.h"

namespace cnnstudio::ui {

struct NetworkFit {
    QString datasetName;   // as the user picked it ("Fashion-MNIST", "FER2013 CSV train.csv")
    QStringList changes;   // one line per change ("input: 28×28 grey instead of 48×48 grey")
    QString refusal;       // why this network cannot train on this data set; empty when it can
    bool known = false;    // false while the data set has not been read yet
    NetworkSpec trainedSpec;  // the network the run trains, when known and it can
    ShapeReport fitted;    // its shapes
    // Why the run's batch does not fit the memory it trains in (batchMemoryRefusal,
    // memory_fit.h); empty when it fits or nothing is known to check.
    QString memoryRefusal;

    bool canTrain() const { return refusal.isEmpty(); }
    bool adapted() const { return !changes.isEmpty(); }
};

// The fit of `spec` to the data set `datasetSpec` (the worker's string) summarised by `data`.
// Image folders are resized to the network's input by the loader, so only their classes count.
// An empty summary (not read yet, or unreadable) gives a fit that is not known.
NetworkFit fitNetworkToData(const NetworkSpec& spec, const QString& datasetSpec, const DatasetSummary& data);

// "48×48 grey", "32×32 colour", "28×28, 4 channels".
QString imageSizeText(int channels, int height, int width);

}  // namespace cnnstudio::ui
