// Input fields inside a scrolling panel that the mouse wheel scrolls past instead of changing.
#pragma once

class QWidget;

namespace cnnstudio::ui {

// Every spin box and combo box under `panel` (as built now) takes the wheel only while it has
// the keyboard focus; unfocused, the wheel goes to the panel's scroll area. Without this,
// scrolling a form changes whichever field passes under the pointer, silently. A panel that
// builds fields again (the inspector, for each node) calls it again; it keeps one filter.
void letWheelScrollPastUnfocusedFields(QWidget* panel);

}  // namespace cnnstudio::ui
