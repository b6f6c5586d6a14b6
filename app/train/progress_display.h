// What a person watching cnnstudio-train sees, drawn from the same events the dashboard reads:
// on a terminal a one-line progress bar (rate, ETA) redrawn in place, otherwise plain lines.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "cnnstudio/event_reader.h"

namespace cnnstudio::app {

class ProgressDisplay {
public:
    // terminal: redraw one progress line with \r (for an isatty stream); else one line per event.
    ProgressDisplay(std::FILE* out, bool terminal);

    // An EventWriter listener: every event as written, read back through parseEvent.
    void onEvent(const nlohmann::json& event);

private:
    void runStarted(const RunStartedEvent& event);
    void step(const StepEvent& event);
    void epoch(const EpochEvent& event);
    void finished(const FinishedEvent& event);
    void endProgressLine();

    std::FILE* out_;
    bool terminal_;
    bool progressLineOpen_ = false;
    int epochs_ = 0;
    long long stepsPerEpoch_ = 0;
    long long lastStep_ = 0;   // of the previous step event, for the pace
    double lastElapsed_ = 0;
};

// "1:02:03" or "2:03".
std::string formatDuration(double seconds);

}  // namespace cnnstudio::app
