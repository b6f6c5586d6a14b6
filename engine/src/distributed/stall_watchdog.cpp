#include "distributed/stall_watchdog.h"

namespace cnnstudio {

StallWatchdog::StallWatchdog(std::chrono::seconds timeout,
                             std::function<void(const std::string&)> onStall)
    : timeout_(timeout), onStall_(std::move(onStall)), thread_([this] { watch(); }) {}

StallWatchdog::~StallWatchdog() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

StallWatchdog::Guard::Guard(StallWatchdog& watchdog, std::string activity) : watchdog_(watchdog) {
    {
        std::lock_guard lock(watchdog_.mutex_);
        watchdog_.activity_ = std::move(activity);
        watchdog_.since_ = std::chrono::steady_clock::now();
    }
    watchdog_.changed_.notify_all();
}

StallWatchdog::Guard::~Guard() {
    {
        std::lock_guard lock(watchdog_.mutex_);
        watchdog_.activity_.clear();
    }
    watchdog_.changed_.notify_all();
}

void StallWatchdog::watch() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        if (activity_.empty()) {
            changed_.wait(lock);
            continue;
        }
        auto deadline = since_ + timeout_;
        if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && !activity_.empty() &&
            std::chrono::steady_clock::now() >= since_ + timeout_) {
            std::string message = activity_ + " did not complete within " +
                                  std::to_string(timeout_.count()) + " s";
            lock.unlock();
            onStall_(message);
            return;
        }
    }
}

}  // namespace cnnstudio
