// What a subscription reports about itself.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "broker/message.h"

namespace broker {

/// Counters and positions of one subscription (or one group). Counts since it was created.
struct SubscriptionStats {
  /// The committed position (seed 000's "offset"): the lowest offset not yet confirmed,
  /// dead-lettered, filtered out or skipped by retention. Everything below it is done;
  /// it is what a durable broker saves. Never above `cursor`.
  Offset committed = 0;
  Offset cursor = 0;              // the next offset never handed out
  std::uint64_t backlog = 0;      // waiting to be handed out: returned + matching after cursor
  std::uint64_t in_flight = 0;    // handed out, not yet confirmed or returned
  std::uint64_t delivered = 0;    // offers made (every attempt)
  std::uint64_t redelivered = 0;  // offers with attempt > 1
  std::uint64_t confirmed = 0;    // acks / handler confirmations accepted
  std::uint64_t dead_lettered = 0;
  std::uint64_t skipped = 0;   // messages dropped by retention before this subscription got them
  std::uint64_t filtered = 0;  // messages the filter passed over
  std::uint64_t redriven = 0;  // dead letters moved back or republished (SPEC R25)
  std::uint64_t purged = 0;    // dead letters dropped (SPEC R25)
  bool paused = false;         // SPEC R26
  bool operator==(const SubscriptionStats&) const = default;
};

/// Prints it as `SubscriptionStats{field=value, ...}` (strings quoted, other bytes as \xNN), for
/// test failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const SubscriptionStats& v);

/// How far a subscription (or group) is behind (SPEC R27): messages not yet confirmed
/// (waiting or held; filtered, skipped and dead-lettered ones are done) and how long the
/// lowest of them has waited since it was published.
struct Lag {
  std::uint64_t messages = 0;
  Millis oldest_age{0};  // 0 when there is none; never negative
  bool operator==(const Lag&) const = default;
};

/// Prints it as `Lag{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Lag& v);

/// A message that used up its deliveries: where it died, how often it was offered, why the
/// last offer failed, and when (the injected clock's time, or the `now` of the pull call).
struct DeadLetter {
  std::string topic;
  std::string subscription;  // the subscription, or the group for a push group
  MessagePtr message;
  int attempts = 0;
  std::string reason;
  Time died_at{};
};

/// Prints it as `DeadLetter{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const DeadLetter& v);

}  // namespace broker
