// Ends the whole job when a collective does not complete in time: a peer rank that died or
// hangs must not leave the others waiting forever.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace cnnstudio {

class StallWatchdog {
public:
    // onStall receives the message; it runs on the watchdog's thread and must end the process.
    StallWatchdog(std::chrono::seconds timeout, std::function<void(const std::string&)> onStall);
    ~StallWatchdog();

    // Watches one blocking activity for as long as the guard lives.
    class Guard {
    public:
        Guard(StallWatchdog& watchdog, std::string activity);
        ~Guard();
        Guard(const Guard&) = delete;
        Guard& operator=(const Guard&) = delete;

    private:
        StallWatchdog& watchdog_;
    };

private:
    void watch();

    std::chrono::seconds timeout_;
    std::function<void(const std::string&)> onStall_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::string activity_;  // empty: nothing in flight
    std::chrono::steady_clock::time_point since_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace cnnstudio
