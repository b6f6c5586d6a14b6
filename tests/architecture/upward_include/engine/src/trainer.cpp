// The engine reaching up into the ui: the include-direction check must reject this tree.
#include "cnnstudio/error.h"
#include "cnnstudio/ui/main_window.h"
