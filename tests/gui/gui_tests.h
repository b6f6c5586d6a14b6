// The GUI test classes of gui_tests, each run by name: `gui_tests DesignDocumentTest [QTest options]`.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <QObject>

#include "cnnstudio/ui/training/dataset_preview.h"

class QWidget;

namespace cnnstudio::ui::tests {

// Each test file registers its class: name -> a function making an instance.
std::map<std::string, std::function<QObject*()>>& testClasses();

struct RegisterTestClass {
    RegisterTestClass(const char* name, std::function<QObject*()> make) { testClasses()[name] = std::move(make); }
};

// Where tests/gui/data is (the recorded runs).
QString testDataPath(const QString& relative);

// What Fashion-MNIST's preview reports: 28×28 grey images in ten classes.
cnnstudio::ui::DatasetSummary fashionMnistShape();

// A checkpoint folder the run catalogue can verify: a progress record and checksummed weights.
bool writeCheckpoint(const QString& folder);

// One notch of the mouse wheel down, sent to `field` itself: a field that takes the wheel steps
// its value, one that lets it pass (common/wheel_guard.h) does not.
void wheelOneNotchDownOn(QWidget* field);

}  // namespace cnnstudio::ui::tests

#define CNNSTUDIO_GUI_TEST(Class) \
    static const cnnstudio::ui::tests::RegisterTestClass registered##Class(#Class, [] { return new Class; })
