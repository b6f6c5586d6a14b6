// Undo and redo keys typed in the designer's fields act on the design document.
#pragma once

class QWidget;

namespace cnnstudio::ui {

// Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y in `editor` (a line edit or spin box, or a widget holding
// some) undo and redo the document, as they do on the canvas. Otherwise the focused field claims
// them for its own typing history, which after Enter holds nothing the user means, and the
// window's Undo never fires. An edit still being typed is committed first, as Enter would, so the
// undo takes back that edit.
void giveUndoKeysToTheDocument(QWidget* editor);

}  // namespace cnnstudio::ui
