// No Qt header here: see failed_event.h.
#include "training/failed_event.h"

#include "cnnstudio/events.h"

namespace cnnstudio::ui {

void appendFailedEvent(const std::filesystem::path& eventsFile, const std::string& reason, long long step, int epoch,
                       bool killedByUser) {
    EventWriter events;
    events.addFile(eventsFile);
    events.emit("failed", {{"reason", reason},
                           {"where", "cnnstudio"},
                           {"step", step},
                           {"epoch", epoch},
                           {"killed_by_user", killedByUser}});
}

}  // namespace cnnstudio::ui
