// Bounded exhaustive search: every schedule with at most P preemptions (CHESS-style
// iterative context bounding), enumerated depth-first as explicit walk schedules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "fiber/run.h"
#include "fiber/schedule.h"

namespace fiber {

/// Yields walk schedules; feed each run's result back with record() before next().
/// A preemption is a switch away from a fiber that could have continued; switches at
/// blocking points and at the end of a fiber are free. Under weak memory (`weak`) a load
/// that reads an older store than the newest counts as a preemption too. Not thread-safe.
class ExhaustiveEnumerator {
 public:
  explicit ExhaustiveEnumerator(int max_preemptions, bool weak = false)
      : bound_(max_preemptions), weak_(weak) {}
  /// The next schedule to run, or nullopt once every schedule has been produced.
  std::optional<Schedule> next();
  /// Records the run of the schedule last returned by next().
  void record(const RunResult& result);
  /// Schedules produced so far.
  [[nodiscard]] std::size_t produced() const { return produced_; }

 private:
  int bound_;
  bool weak_;
  bool started_ = false;
  bool done_ = false;
  std::size_t produced_ = 0;
  std::vector<Decision> last_;
};

/// Totals of an exhaustive exploration.
struct ExploreStats {
  std::size_t schedules = 0;
  std::size_t distinct_traces = 0;
  bool complete = false;                   // every schedule within the bound was run
  std::optional<RunResult> first_failure;  // first run for which `ok` returned false
};

/// Runs `run` on every schedule with at most max_preemptions preemptions (up to `limit`
/// schedules; weak memory if `weak`); stops at the first result for which `ok` returns false.
ExploreStats explore_exhaustive(const std::function<RunResult(const Schedule&)>& run,
                                const std::function<bool(const RunResult&)>& ok,
                                int max_preemptions, std::size_t limit, bool weak = false);

}  // namespace fiber
