// Plain values the model takes and returns. Everything is copyable and comparable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace model {

/// Absolute position of a message in its topic (R2).
using Offset = std::uint64_t;
/// Message headers; a header filter lists headers that must be present and equal (R5).
using Headers = std::map<std::string, std::string>;
/// Milliseconds of the shared clock, both as points in time and as durations.
using Millis = std::int64_t;
/// The longest ack timeout or extension (R11, R14: longer is InvalidArgument): 2^40 ms.
inline constexpr Millis kMaxDuration = Millis{1} << 40;
/// The most entries a pull subscription's back-off list takes (R24).
inline constexpr std::size_t kMaxBackoffSteps = 32;
/// The largest max_in_flight a pull subscription takes (R22).
inline constexpr std::size_t kMaxInFlight = std::size_t{1} << 20;

/// How a partitioned topic picks the partition of a keyed message (R29).
enum class Partitioner {
  kMurmur2,       // Kafka's default partitioner
  kJavaHashCode,  // seed 003's: |String.hashCode(key)| % partitions
};
/// How a consumer group spreads partitions over its members (R30).
enum class Assignor { kRange, kRoundRobin, kSticky, kCooperativeSticky };
/// R31: how many messages may wait passed over (with the returned ones) before a poll of an
/// ordered subscription stops at a blocked message instead of passing it over.
inline constexpr std::size_t kMaxPassedOver = 1024;
/// The most partitions a topic takes (R29).
inline constexpr std::uint32_t kMaxPartitions = 1024;

/// Where send put a message (R29): its partition and its offset there.
struct Placement {
  std::uint32_t partition = 0;
  Offset offset = 0;
  bool operator==(const Placement&) const = default;
};

/// Where a new subscription starts reading (R4).
struct Start {
  enum class Kind { kEnd, kBeginning, kOffset };
  Kind kind = Kind::kEnd;
  Offset offset = 0;  // kOffset only
  bool operator==(const Start&) const = default;
};

/// One message of a topic's log.
struct Message {
  Offset offset = 0;
  std::string payload;
  Headers headers;
  std::string key;
  Millis publish_time = 0;
};

/// What lag() reports (R27): messages not yet confirmed (waiting or held; filtered, skipped
/// and dead-lettered ones are done) and how long the lowest of them has waited.
struct Lag {
  std::uint64_t messages = 0;
  Millis oldest_age = 0;  // now - its publish time (0 when none, never negative)
  bool operator==(const Lag&) const = default;
};

/// Why ack, nack, term or extend took a receipt or refused it (R11, R32), checked in this
/// order: a group receipt whose member has not owned the partition since its generation
/// (stale_generation); no holder and at or past the subscription's cursor (unknown_offset);
/// no holder and below it (already_settled); held by another member (not_holder); held by
/// the member past its deadline (late); else accepted.
enum class AckOutcome {
  kAccepted,
  kStaleGeneration,
  kUnknownOffset,
  kAlreadySettled,
  kNotHolder,
  kLate
};

/// The outcome's name as SPEC writes it ("accepted", "not_holder", ...).
constexpr const char* to_string(AckOutcome outcome) noexcept {
  switch (outcome) {
    case AckOutcome::kAccepted:
      return "accepted";
    case AckOutcome::kStaleGeneration:
      return "stale_generation";
    case AckOutcome::kUnknownOffset:
      return "unknown_offset";
    case AckOutcome::kAlreadySettled:
      return "already_settled";
    case AckOutcome::kNotHolder:
      return "not_holder";
    case AckOutcome::kLate:
      return "late";
  }
  return "?";
}

/// What ack, nack, term and extend answer (R11): taken exactly when the outcome is accepted.
struct AckResult {
  AckOutcome outcome = AckOutcome::kAccepted;
  constexpr explicit operator bool() const { return outcome == AckOutcome::kAccepted; }
  bool operator==(const AckResult&) const = default;
};

/// One message returned by poll (R11).
struct Received {
  Offset offset = 0;
  std::string payload;
  int attempt = 0;
  Millis deadline = 0;
  std::string topic{};           // R32 poll_group: the partition's topic ("" from poll)
  std::uint64_t generation = 0;  // R32 poll_group: the group generation it was handed out in
  bool operator==(const Received&) const = default;
};

/// A member's place in its consumer group (R32): the generation and its partitions.
struct Membership {
  std::uint64_t generation = 0;
  std::vector<std::uint32_t> partitions;
  bool operator==(const Membership&) const = default;
};

/// One partition as its consumer group sees it (R32).
struct PartitionStats {
  std::uint32_t partition = 0;
  std::string topic;
  std::string owner;  // "" while no member owns it
  Offset end = 0;
  Offset committed = 0;
  Lag lag;
  bool operator==(const PartitionStats&) const = default;
};

/// What group_stats reports (R32).
struct GroupStats {
  std::uint64_t generation = 0;
  std::vector<std::string> members;  // join order
  std::map<std::string, std::vector<std::uint32_t>> assignment;
  std::vector<PartitionStats> partitions;
  bool operator==(const GroupStats&) const = default;
};

/// One held message moved by expire (R11).
struct Expired {
  std::string topic;
  std::string subscription;
  Offset offset = 0;
  bool dead_lettered = false;
  bool operator==(const Expired&) const = default;
};

/// A message that used up its deliveries (R7): where it died (the subscription's name, or
/// the group's for a push group), how often it was offered, why, and when.
struct DeadLetter {
  std::string topic;
  std::string subscription;
  Offset offset = 0;
  std::string payload;
  int attempts = 0;
  std::string reason;
  Millis died_at = 0;  // push: the clock during the drain; pull: the call's `now`
  Headers headers{};   // the message's, so redrive_to publishes it whole (R25)
  std::string key{};
  bool operator==(const DeadLetter&) const = default;
};

/// What stats() reports about a subscription or group (R13).
struct Stats {
  Offset committed = 0;  // lowest offset not yet confirmed, dead, filtered out or skipped
  Offset cursor = 0;     // next offset never handed out
  std::uint64_t backlog = 0;
  std::uint64_t in_flight = 0;
  std::uint64_t delivered = 0;
  std::uint64_t redelivered = 0;
  std::uint64_t confirmed = 0;
  std::uint64_t dead_lettered = 0;
  std::uint64_t skipped = 0;
  std::uint64_t filtered = 0;
  std::uint64_t redriven = 0;  // dead letters moved back or republished (R25)
  std::uint64_t purged = 0;    // dead letters dropped (R25)
  bool paused = false;         // R26
  bool operator==(const Stats&) const = default;
};

/// One push handler call made during a drain, and what its scripted side effect returned.
struct HandlerCall {
  std::string topic;
  std::string subscription;  // the member's own name (for a group: the member)
  Offset offset = 0;
  std::string payload;
  int attempt = 0;
  std::string effect;  // "" when the step had no side effect; else e.g. "publish -> 3"
  bool operator==(const HandlerCall&) const = default;
};

}  // namespace model
