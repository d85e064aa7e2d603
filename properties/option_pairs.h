// Pairwise coverage of the options a subscription and its topic can have, in the style of
// swarm testing: each subscription's features are the options it was made with (pull:
// filter, max_in_flight, ordered, backoff, durable_attempts; push: filter, group, backoff,
// durable_attempts, idempotent), its topic's retention, and what happened to it since it
// was made (paused, redriven, seeked, a keyed publish on its topic). Whenever it delivers a
// message (a poll that got one, a handler call), every pair of its features is reached:
// the pair was not only drawn but exercised.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace props {

/// The feature pairs one sequence exercised ("pull filter+ordered", "push group+paused").
class OptionPairs {
 public:
  /// Records what op and its model outcome show; adds the pairs a delivery exercised.
  void observe(const oplang::Op& op, const oplang::Outcome& outcome);
  [[nodiscard]] const std::set<std::string>& reached() const { return reached_; }

  /// Every pair the generators must exercise at CI budget: all pairs of each kind's
  /// features, less the ones the generators never draw together (listed with why).
  static std::vector<std::string> expected();

 private:
  struct Sub {
    bool pull = false;
    std::set<std::string> features;
    std::string group;  // a push group member's group: the group's controls reach it
  };
  void delivered(const std::pair<std::string, std::string>& key);
  bool retained(const std::string& topic) const;

  std::map<std::pair<std::string, std::string>, Sub> subs_;
  std::set<std::string> retained_;  // topics created with a retention bound
  std::set<std::string> reached_;
};

}  // namespace props
