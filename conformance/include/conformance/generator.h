// Random scripts of the common subset, and the timing discipline that lets a real-time
// engine run them without false alarms.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "conformance/profile.h"
#include "oplang/model_runner.h"
#include "oplang/ops.h"

namespace conformance {

/// How scripts are made. Times are model milliseconds; an engine on real time runs one of
/// them as `unit_ms` real milliseconds (JetStreamTarget), so `margin` x unit_ms is how far
/// (in real time) every call stays from every ack deadline.
struct GenOptions {
  std::size_t ops = 30;
  model::Millis margin = 5;
  std::vector<model::Millis> ack_timeouts = {15, 25};
  /// The message bounds (R3) a created topic may have, half the time; empty: every topic
  /// is unbounded (the common subset). Give them only to a target that serves them
  /// (Target::serves, retention_by_messages).
  std::vector<std::size_t> retention_messages = {};
  /// The max_in_flight (R22) a pull subscription may have, a third of the time; empty: none
  /// (the common subset). Only for a target that serves it (pull_with_max_in_flight).
  std::vector<std::size_t> max_in_flight = {};
  /// Whether scripts seek (R12) now and then: a subscription to an offset in or just outside
  /// its topic's range. Only for a target that serves it (Target::serves of a Seek).
  bool seek = false;
  /// Whether scripts seek by time (R28) now and then: to a publish time with nothing
  /// published within the margin before it, to 0, to now, or (refused) a little after now.
  /// Only for a target that serves it (Target::serves of a SeekToTime).
  bool seek_to_time = false;
  /// Whether nacks carry a delay (R24) half the time: 0 now and then, else a few model ms
  /// more than the margin and less than the ack timeout less the margin, and only where its
  /// wait ends a margin away from every other wait and held deadline of the subscription.
  /// Only for a target that serves it (nack_with_delay).
  bool nack_delays = false;
  /// Whether scripts ask for lag (R27) now and then. Only for a target that serves it
  /// (Target::serves of a GetLag).
  bool lag = false;
  /// Whether scripts make push subscriptions (R8) on unbounded topics, their handlers
  /// answering by script (confirm, reject, throw, terminate; no side effects), and drain
  /// them now and then. Only for a target that serves it (push_without_effects).
  bool push = false;
  /// Whether lag is asked of subscriptions with a header filter too; false for a target whose
  /// filter is the adapter's (Target::filter_is_the_adapters).
  bool lag_filtered = true;
};

/// Follows a script on the model (under a profile) and knows the deadline of every held
/// message and the end of every retry wait, so it can tell whether a step keeps the margin.
class Tracker {
 public:
  Tracker(const Profile& profile, model::Millis margin);
  /// Whether advancing by ms lands at least `margin` away from every held deadline and
  /// every retry wait still to end.
  [[nodiscard]] bool advance_ok(model::Millis ms) const;
  /// Whether every retry wait still to end is at least `margin` away from every other one
  /// and from every held deadline of its subscription: which comes back first is then the
  /// same on an engine's clock.
  [[nodiscard]] bool waits_spaced() const;
  /// Whether no kept message of the seek's topic was published within `margin` before its
  /// time (true for an unknown topic or a time after now: the seek is refused): every
  /// message is then stamped clearly before or at or after it on an engine's clock.
  [[nodiscard]] bool seek_time_ok(const oplang::SeekToTime& op) const;
  /// The end of every retry wait still to end: (topic, subscription) -> its ends.
  [[nodiscard]] std::map<std::pair<std::string, std::string>, std::vector<model::Millis>>
  retry_waits() const;
  /// Runs op on the model; returns its outcome.
  oplang::Outcome step(const oplang::Op& op);
  using Key = std::tuple<std::string, std::string, model::Offset>;
  struct Hold {
    std::string member;
    model::Millis deadline = 0;
  };
  /// The messages the model holds now: (topic, subscription, offset) -> (member, deadline).
  [[nodiscard]] std::map<Key, Hold> held() const;
  /// The model's clock.
  [[nodiscard]] model::Millis now() const { return runner_.model().now(); }
  /// The model the script runs on.
  [[nodiscard]] const oplang::ModelRunner& runner() const { return runner_; }

 private:
  oplang::ModelRunner runner_;
  model::Millis margin_;
};

/// Whether every advance of script keeps the margin, every step keeps retry waits spaced,
/// and every seek by time is clear of publish times (a shrunk script must, too).
bool keeps_margin(const oplang::Script& script, const Profile& profile, model::Millis margin);

/// A random script from seed: topics (bounded by messages if options allow), publishes
/// with and without headers, pull subscriptions (filters, ack timeouts, max deliveries,
/// both starts), polls by two members, acks, nacks (delayed if options allow), terms and
/// extends (mostly of held messages, by their holder), seeks if options allow, advances that keep
/// the margin (each followed by expire if the engine expires on its own clock; otherwise expire is
/// a step of its own), dead letters, and a little bad input.
oplang::Script generate(std::uint64_t seed, const GenOptions& options, const Profile& profile);

}  // namespace conformance
