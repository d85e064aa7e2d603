// Depth-first enumeration of walk schedules under a preemption bound.
#include "fiber/exhaustive.h"

#include <unordered_set>

namespace fiber {

std::optional<Schedule> ExhaustiveEnumerator::next() {
  if (!started_) {
    started_ = true;
    ++produced_;
    Schedule first = Schedule::walk({});
    first.weak = weak_;
    return first;
  }
  if (done_) return std::nullopt;
  std::vector<int> preemptions_before(last_.size() + 1, 0);
  for (std::size_t i = 0; i < last_.size(); ++i) {
    const bool preempted = last_[i].running_was_runnable && last_[i].chosen != 0;
    preemptions_before[i + 1] = preemptions_before[i] + (preempted ? 1 : 0);
  }
  for (std::size_t i = last_.size(); i-- > 0;) {
    const Decision& d = last_[i];
    if (d.chosen + 1 >= d.options) continue;
    const int cost = d.running_was_runnable ? 1 : 0;
    if (preemptions_before[i] + cost > bound_) continue;
    std::vector<std::uint32_t> choices;
    for (std::size_t j = 0; j < i; ++j) choices.push_back(last_[j].chosen);
    choices.push_back(d.chosen + 1);
    ++produced_;
    Schedule s = Schedule::walk(std::move(choices));
    s.weak = weak_;
    return s;
  }
  done_ = true;
  return std::nullopt;
}

void ExhaustiveEnumerator::record(const RunResult& result) { last_ = result.decisions; }

ExploreStats explore_exhaustive(const std::function<RunResult(const Schedule&)>& run,
                                const std::function<bool(const RunResult&)>& ok,
                                int max_preemptions, std::size_t limit, bool weak) {
  ExploreStats stats;
  ExhaustiveEnumerator e(max_preemptions, weak);
  std::unordered_set<std::uint64_t> hashes;
  while (std::optional<Schedule> s = e.next()) {
    if (stats.schedules == limit) return stats;
    RunResult r = run(*s);
    e.record(r);
    ++stats.schedules;
    hashes.insert(r.trace_hash);
    stats.distinct_traces = hashes.size();
    if (!ok(r)) {
      stats.first_failure = std::move(r);
      return stats;
    }
  }
  stats.complete = true;
  return stats;
}

}  // namespace fiber
