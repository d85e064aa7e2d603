// Which states of the contract a sequence reached, for RC_TAG and the coverage test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "oplang/ops.h"
#include "oplang/outcome.h"
#include "option_pairs.h"

namespace props {

/// Collects the interesting states a run passed through (redelivery, dead letter, seek,
/// retention gap, self-unsubscribe, a group found by its name, committed behind the cursor,
/// an idempotent repeat, an observation of an unknown topic, an oldest offset that moved, and
/// corners that need long runs of one kind: 5 publishes in a row,
/// a drain that makes 5 handler calls, an offer's 3rd attempt, an expire that moves 2
/// messages, a backlog of 5; R22 and R23: a poll held back by max_in_flight, a term
/// accepted, a message dead-lettered as terminated; R25-R28: a redrive, a redrive to a topic
/// and a purge that moved something, a poll and a drain while paused, a lag with an age, a
/// seek by time; R31: a message held back by its key, then handed out; R29: a keyed publish routed,
/// a delivery from a partition, a partition out of range, the partitioned topic named where a
/// partition is meant; R32: a push group rebalanced, a call to a push group's member and one
/// of a message it got back; R2: a publish through a Publisher after its topic was deleted),
/// judged from the model's outcomes.
struct Reached {
  std::set<std::string> states;
  int publishes_in_a_row = 0;  // the current run of publish steps
  /// Pull subscriptions created with a max_in_flight, and a lower bound of how many they
  /// hold (what their polls were given, less what ack/nack/term accepted; 0 again after
  /// anything that may return messages in bulk: expire, seek, restart, crash).
  std::map<std::pair<std::string, std::string>, std::pair<std::size_t, std::size_t>> bounded;
  /// Ordered pull subscriptions without a bound (R31): one past the highest offset handed
  /// out, and whether the last poll came back short with no publish since.
  struct OrderedSeen {
    std::uint64_t high = 0;
    bool came_back_short = false;
  };
  std::map<std::pair<std::string, std::string>, OrderedSeen> ordered;
  /// Partitioned topics that exist (R29).
  std::set<std::string> partitioned;
  /// R32: (topic, member) of each push group join that succeeded.
  std::set<std::pair<std::string, std::string>> push_members;
  /// Subscriptions paused and not resumed since (R26).
  std::set<std::pair<std::string, std::string>> paused;
  /// R2: topics the runner has a Publisher for (a publish through one succeeded), and
  /// those of them deleted since that Publisher was made (it must find out).
  std::set<std::string> with_publisher, deleted_under_publisher;
  /// Pairs of options exercised (counted apart from `states`: too many for RC_TAG).
  OptionPairs pairs;

  /// Records what op and its outcome show.
  void observe(const oplang::Op& op, const oplang::Outcome& outcome);
  /// Tags the current RapidCheck test case with every state reached.
  void tag() const;
};

}  // namespace props
