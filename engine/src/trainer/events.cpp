#include "cnnstudio/events.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "cnnstudio/error.h"

namespace cnnstudio {

std::string utcTimestamp() {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const std::time_t seconds = system_clock::to_time_t(now);
    const auto milliseconds = duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[64];  // room for any int, so the compiler can prove nothing is cut off
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, int(milliseconds));
    return text;
}

EventWriter::EventWriter(bool writer) : writer_(writer) {}

EventWriter::~EventWriter() = default;

void EventWriter::addFile(const std::filesystem::path& file) {
    if (!writer_) return;
    auto output = std::make_unique<FileOutput>();
    output->path = file;
    output->stream.open(file, std::ios::out | std::ios::app);
    if (!output->stream)
        throw Error("cannot open the event log for appending", file.string(),
                    "check that the run folder is writable");
    files_.push_back(std::move(output));
}

void EventWriter::addStream(std::ostream& stream) {
    if (writer_) streams_.push_back(&stream);
}

void EventWriter::addListener(std::function<void(const nlohmann::json&)> listener) {
    listeners_.push_back(std::move(listener));
}

void EventWriter::emit(const std::string& event, nlohmann::json fields) {
    if (!fields.is_object()) fields = nlohmann::json::object();
    for (const char* reserved : {"schema", "event", "time"}) fields.erase(reserved);
    nlohmann::json line = fields;
    line["schema"] = kEventSchemaVersion;
    line["event"] = event;
    line["time"] = utcTimestamp();

    if (writer_) {
        // "schema", "event" and "time" lead each line so that a person reading the log (or a
        // reader checking the schema first) finds them at once; the fields follow in key order.
        // Invalid UTF-8 (a class name read from a file) is replaced, not thrown over mid-run.
        const auto dump = [](const nlohmann::json& value) {
            return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        };
        std::string text = "{\"schema\":" + std::to_string(kEventSchemaVersion) + ",\"event\":" +
                           dump(line["event"]) + ",\"time\":" + dump(line["time"]);
        const std::string rest = dump(fields);  // "{...}", the fields without the three above
        if (rest.size() > 2) {
            text += ',';
            text.append(rest, 1, std::string::npos);
        } else {
            text += '}';
        }
        text += '\n';
        for (auto& file : files_) {
            file->stream << text;
            file->stream.flush();
            if (!file->stream)
                throw Error("cannot write to the event log", file->path.string(),
                            "check the free disk space");
        }
        for (std::ostream* stream : streams_) {
            *stream << text;
            stream->flush();
        }
        // A stream whose reader went away (stdout closed: EPIPE) is written no more; the files
        // above keep the whole record, and the run goes on.
        std::erase_if(streams_, [](const std::ostream* stream) { return !*stream; });
    }
    for (auto& listener : listeners_) listener(line);
}

}  // namespace cnnstudio
