#include "common/stop_signals.h"

#include <csignal>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

#include <pthread.h>

namespace cnnstudio {
namespace {

std::mutex redirectMutex;
std::function<void(int)> redirectedAction;  // guarded by redirectMutex

// The default action of `signal`, now, in this thread: the process ends as if never watched.
[[noreturn]] void endAsTheSignalWould(int signal) {
    std::signal(signal, SIG_DFL);
    sigset_t just;
    sigemptyset(&just);
    sigaddset(&just, signal);
    pthread_sigmask(SIG_UNBLOCK, &just, nullptr);
    raise(signal);
    std::_Exit(128 + signal);  // a signal whose default action is to be ignored
}

}  // namespace

void ignoreClosedOutput() { std::signal(SIGPIPE, SIG_IGN); }

void watchStopSignals(std::initializer_list<int> signals, std::atomic<bool>& stopRequested) {
    sigset_t watched;
    sigemptyset(&watched);
    for (int signal : signals) sigaddset(&watched, signal);
    pthread_sigmask(SIG_BLOCK, &watched, nullptr);
    std::thread([watched, &stopRequested] {
        for (;;) {
            int signal = 0;
            if (sigwait(&watched, &signal) != 0) continue;
            if (std::lock_guard lock(redirectMutex); redirectedAction) {
                redirectedAction(signal);
                continue;
            }
            if (stopRequested.exchange(true)) endAsTheSignalWould(signal);
        }
    }).detach();
}

StopSignalsRedirected::StopSignalsRedirected(std::function<void(int signal)> action) {
    std::lock_guard lock(redirectMutex);
    redirectedAction = std::move(action);
}

StopSignalsRedirected::~StopSignalsRedirected() {
    std::lock_guard lock(redirectMutex);
    redirectedAction = nullptr;
}

void unblockAllSignals() {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace cnnstudio
