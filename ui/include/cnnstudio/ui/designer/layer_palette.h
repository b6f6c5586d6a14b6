// LayerPalette: every layer type of the engine's catalogue (cnnstudio::layerTypes()), grouped by
// category, with a filter box. Drag a layer onto the canvas to add it; click one, then click on
// the canvas where it goes; double-click (or Enter) adds it in the middle of the view.
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
    void layerChosen(const QString& type);     // clicked: place it with the next canvas click
    void layerActivated(const QString& type);  // double-clicked or Enter: add it now

private:
    void applyFilter(const QString& text);

    QLineEdit* filter_;
    QTreeWidget* tree_;
};

}  // namespace cnnstudio::ui
