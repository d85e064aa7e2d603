// Runs a set of fibers to completion under a Schedule and reports what happened: the
// trace, its hash, and whether the run completed, deadlocked or ran too long.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "fiber/schedule.h"

namespace fiber {

/// How a run ended.
enum class Outcome {
  kCompleted,  // every fiber finished
  kDeadlock,   // some fiber unfinished, none runnable, no timed wait pending
  kStepLimit,  // more than RunOptions::max_steps scheduling points (livelock / too long)
};

/// One scheduling point: which fiber reached it, what it was, which fiber ran next.
struct TraceEvent {
  int fiber;          // -1 for the controlling main context
  const char* label;  // a string literal: "lock", "unlock", "wait", "finish", ...
  int next;           // the fiber chosen to run after this point (-1: run over)
};

/// A point with at least two runnable fibers, or (weak memory) a load with at least two
/// stores it may read: the only places that consume a choice.
struct Decision {
  std::uint32_t options;      // runnable fibers, or stores the load may read
  bool running_was_runnable;  // the fiber at the point could have continued (a load: true)
  std::uint32_t chosen;       // index into the rotated candidates (0 = no switch), or the
                              // store read, newest first (0 = the newest)
  bool load = false;          // a load's choice
};

/// What a run did. Runs are deterministic: the same schedule gives the same trace_hash.
struct RunResult {
  Outcome outcome = Outcome::kCompleted;
  Schedule schedule;                   // as given
  std::vector<std::uint32_t> choices;  // chosen index at each Decision: replays as a walk
  std::vector<Decision> decisions;
  std::vector<TraceEvent> trace;
  std::uint64_t trace_hash = 0;
  std::size_t steps = 0;
  std::chrono::milliseconds virtual_end{0};  // virtual time when the run ended
  std::exception_ptr error;                  // first exception that escaped a fiber body
  std::string error_fiber;                   // "fiber N: what()"
  std::string report;                        // deadlock / step-limit diagnosis (each fiber's state)
  std::string data_race;                     // weak memory: the first data race, or ""
  std::size_t stale_reads = 0;               // weak memory: loads that read an older store

  /// Completed, no fiber body threw, and no data race.
  [[nodiscard]] bool ok() const {
    return outcome == Outcome::kCompleted && !error && data_race.empty();
  }
  /// Outcome, error, report and the schedule text, for a failure message.
  [[nodiscard]] std::string describe() const;
};

/// Limits of one run.
struct RunOptions {
  std::size_t max_steps = 200000;
  std::size_t stack_bytes = 256 * 1024;
};

/// Runs each body as a fiber, plus any fiber they start through sync::Thread, under
/// `schedule`, until all have finished. The fibers run on a fresh thread whose Boost.Fiber
/// scheduler is driven by the schedule; this call waits for it. A deadlocked or
/// step-limited run is abandoned (its thread parks forever and its fibers never resume:
/// memory is leaked, nothing is touched again) and reported, never hung.
RunResult run_fibers(std::vector<std::function<void()>> bodies, const Schedule& schedule,
                     RunOptions options = {});

/// Parks the running fiber for d of virtual time (see sync_fiber.h). Inside a run only.
void sleep_for(std::chrono::milliseconds d);
/// A scheduling point with a caller-chosen label (a string literal). Inside a run only.
void yield(const char* label);

/// Name of an outcome: "completed", "deadlock", "step-limit".
const char* to_string(Outcome o);

}  // namespace fiber
