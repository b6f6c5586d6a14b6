// LayerPalette: every layer type of the engine's catalogue (cnnstudio::layerTypes()), grouped by
// category, with a filter box. Drag a layer onto the canvas to add it; double-click (or Enter)
// adds it in the middle of the view.
#pragma once

#include <QWidget>

class QLineEdit;
class QTreeWidget;

namespace cnnstudio::ui {

class LayerPalette : public QWidget {
    Q_OBJECT

public:
    explicit LayerPalette(QWidget* parent = nullptr);

    QStringList layerTypeNames() const;  // as listed, in order

signals:
    void layerActivated(const QString& type);

private:
    void applyFilter(const QString& text);

    QLineEdit* filter_;
    QTreeWidget* tree_;
};

}  // namespace cnnstudio::ui
