#include "cnnstudio/ui/manual_dialog.h"

#include <QDialogButtonBox>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace cnnstudio::ui {
namespace {

QString manualHtml() {
    return QObject::tr(
        "<h2>CNN Studio in five minutes</h2>"
        "<p>CNN Studio has five pages: <b>Design</b> (draw the network), <b>Train</b> (choose the data, "
        "settings and hardware, then watch it learn), <b>Run history</b> (every run you trained, to "
        "reopen, compare, resume or use), <b>Hardware</b> (measure and compare what machines do with "
        "a network) and <b>Live demo</b> (a trained emotion model on a camera, video or image folder). "
        "Ctrl+1 to Ctrl+5 switch between them.</p>"

        "<h3>Design</h3>"
        "<p>Start from a preset (File ▸ New from preset) or an empty network. Drag layers from the "
        "palette onto the canvas and connect an output port to an input port. The inspector edits the "
        "selected layer; the problems list names every layer whose shapes do not fit, and the status "
        "bar shows the parameters, FLOPs and activation memory per image. <b>Auto layout</b> wraps a "
        "long network into columns read left to right; <b>Fit network</b> shows all of it.</p>"

        "<h3>Train</h3>"
        "<p><b>Data set</b>: the built-in Fashion-MNIST, the FER2013 faces (a CSV file you download from "
        "Kaggle's Facial Expression Recognition Challenge), a folder of MNIST-style IDX files, or a "
        "folder with one sub-folder of images per class. The preview shows the classes and samples.</p>"
        "<p>If the network was drawn for other images or another number of classes, the run trains an "
        "adapted copy: its input takes the data set's image size and its last layer gives one score per "
        "class. A yellow note above the Train button says exactly what changes; your design stays as "
        "drawn. A network that cannot be adapted (no classifier layer at the end, say) is refused with "
        "the reason.</p>"
        "<p><b>Training</b>: batch size, epochs, optimiser (SGD with momentum, Adam, AdamW), learning "
        "rate, weight decay, the learning-rate schedule with an optional warm-up, early stopping, label "
        "smoothing, class weights, augmentation and the seed. The defaults are those of the "
        "<tt>cnnstudio-train</tt> command.</p>"
        "<p><b>Hardware</b>: the backend (cpu, cpu-ref, cuda, cudnn), precision, GPUs, CPU threads and "
        "data-parallel ranks, and for several machines the node count and a hostfile.</p>"
        "<p>Press <b>Train</b> (F5). The dashboard shows the loss and accuracy curves, the validation "
        "confusion matrix, the speed and the time left. <b>Stop</b> (Shift+F5) finishes the step and "
        "writes a checkpoint, so the run can be resumed (<b>Resume</b> appears beside it, or from Run "
        "history); <b>Kill</b> ends the worker at once. A batch too large for the memory the run trains "
        "in is refused before it starts, with a batch size that fits.</p>"

        "<h3>Run history</h3>"
        "<p>Every run is a folder under the runs folder. Double-click a run to replay its curves. Select "
        "several runs (Ctrl+click) and press <b>Compare</b> to overlay them, one colour per run: solid "
        "lines are validation, dashed lines training. Right-click a run to open, compare, resume, show "
        "its folder or delete it. <b>Run ▸ Classify an image</b> runs a trained model on a picture and "
        "shows the most likely classes.</p>"

        "<h3>Hardware</h3>"
        "<p>Pick the network to measure: a preset, or the one on the Design page, measured as the Train "
        "page's run would train it (fitted to the chosen data set). Tick the backends, CPU thread "
        "counts, precisions, GPU counts and nodes to measure and press "
        "<b>Run</b>; <b>Cancel</b> stops at once and keeps what was measured. The charts show training "
        "images/s with the speedup over the baseline you pick, how throughput scales with GPUs, nodes or "
        "threads against the ideal line, and where a training step's time goes. <b>Overlay report</b> "
        "puts another machine's saved report beside this one, one colour per machine. <b>Training runs</b> shows the speed your "
        "finished runs really reached.</p>"

        "<h3>Exports</h3>"
        "<p>The dashboard's <b>Export</b> button writes the loss and accuracy plots, one above the other, "
        "to one PNG or PDF file, or the per-epoch metrics to a CSV file. File ▸ Export diagram saves "
        "the network drawing.</p>"

        "<h3>Look</h3>"
        "<p>View ▸ Dark theme switches between the light and dark looks; CNN Studio remembers the "
        "choice. Help ▸ Keyboard shortcuts lists every shortcut.</p>");
}

}  // namespace

ManualDialog::ManualDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("CNN Studio manual"));
    setObjectName("manualDialog");
    browser_ = new QTextBrowser(this);
    browser_->setOpenExternalLinks(true);
    browser_->setHtml(manualHtml());
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(browser_);
    layout->addWidget(buttons);
    resize(620, 640);
}

QString ManualDialog::text() const { return browser_->toPlainText(); }

}  // namespace cnnstudio::ui
