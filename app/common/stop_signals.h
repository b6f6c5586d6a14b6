// How the headless programs (cnnstudio-train, -bench, -live) take the signals that ask them to
// stop (SIGINT, SIGTERM and, for the trainer, SIGUSR1): one thread waits for them, never a
// thread that computes. oneDNN's JIT GEMM points the stack pointer into the heap, so a signal
// handler run on a thread inside it writes its frame over heap memory (oneDNN issue #4845): a
// rank interrupted so crashed in the cpu backend's convolution (Chaos.CtrlCInATerminal..., CI
// 2026-12-04).
#pragma once

#include <atomic>
#include <functional>
#include <initializer_list>

namespace cnnstudio {

// Blocks `signals` in the calling thread, so in every thread started after it (OpenMP's, MPI's,
// the data loader's), and starts the one thread that waits for them. Call it once, before any
// other thread starts. The first signal sets `stopRequested`; a signal that finds it set ends
// the process as the signal's default action would.
void watchStopSignals(std::initializer_list<int> signals, std::atomic<bool>& stopRequested);

// While one lives, the watched signals go to `action` instead (on the waiting thread, so it may
// do anything a thread may); without watchStopSignals they stay with their default action.
class StopSignalsRedirected {
public:
    explicit StopSignalsRedirected(std::function<void(int signal)> action);
    ~StopSignalsRedirected();
    StopSignalsRedirected(const StopSignalsRedirected&) = delete;
    StopSignalsRedirected& operator=(const StopSignalsRedirected&) = delete;
};

// Ignores SIGPIPE, so that a reader of standard output that goes away (`| head -3`, an app that
// quit while reading `--events -`) makes the program's writes fail with EPIPE instead of killing
// it mid-run with no checkpoint, no `failed` event and no report. What it would have printed is
// lost; the work, and its record in files, goes on. Call it first thing in main.
void ignoreClosedOutput();

// For a forked child before exec: no signal blocked, as a program expects to start. Only
// async-signal-safe calls.
void unblockAllSignals();

}  // namespace cnnstudio
