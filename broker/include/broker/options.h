// Options of topics and subscriptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "broker/message.h"

namespace broker {

/// Where a new subscription starts reading.
struct StartPosition {
  enum class Kind { kEnd, kBeginning, kOffset };
  Kind kind = Kind::kEnd;
  Offset offset = 0;  // used only with kOffset; must lie in [oldest kept, end]

  static StartPosition end() { return {}; }
  static StartPosition beginning() { return {Kind::kBeginning, 0}; }
  static StartPosition at(Offset o) { return {Kind::kOffset, o}; }
  bool operator==(const StartPosition&) const = default;
};

/// Prints it as `StartPosition{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const StartPosition& v);

/// How a partitioned topic picks the partition of a keyed message (SPEC R29).
enum class Partitioner {
  kMurmur2,       // Kafka's default: murmur2(key bytes) & 0x7fffffff, modulo the partitions
  kJavaHashCode,  // seed 003's Java code: |String.hashCode(key)| modulo the partitions
};

/// The most partitions a topic takes: more is InvalidArgument.
inline constexpr std::uint32_t kMaxPartitions = 1024;

/// Bounded retention (per partition). Zero means unbounded. When a bound is passed, publish
/// drops the oldest messages (it never blocks or refuses); offsets stay absolute.
/// partitions > 1 makes a partitioned topic (SPEC R29): one log per partition, each its
/// own topic named partition_name(topic, p), and the topic itself routes publishes.
struct TopicOptions {
  std::size_t retention_messages = 0;
  std::size_t retention_bytes = 0;  // counts payload bytes
  std::uint32_t partitions = 1;     // 1..kMaxPartitions
  Partitioner partitioner = Partitioner::kMurmur2;
  bool operator==(const TopicOptions&) const = default;
};

/// The longest ack timeout or extension (about 34 years): longer ones are InvalidArgument,
/// so `now + timeout` can never overflow.
inline constexpr Millis kMaxDuration{1LL << 40};

/// The most entries of a subscription's back-off list (SPEC R24).
inline constexpr std::size_t kMaxBackoffSteps = 32;

/// The largest max_in_flight of a pull subscription (SPEC R22): larger is InvalidArgument.
inline constexpr std::size_t kMaxInFlight = std::size_t{1} << 20;

/// Default number of offers before a message is dead-lettered.
inline constexpr int kDefaultMaxDeliveries = 5;

/// Options of a push subscription (a handler called by the dispatcher).
struct PushOptions {
  Headers header_filter;  // every listed header must be present with that value
  Predicate filter;       // optional extra filter; see Predicate for its rules
  int max_deliveries = kDefaultMaxDeliveries;  // >= 1, or 0 for no limit
  StartPosition start;
  std::string group;  // non-empty: members of one group share one position
  /// SPEC R24: after a failed offer of attempt k the message waits backoff[min(k, size) - 1]
  /// of the injected clock before it is offered again; newer messages are offered meanwhile
  /// (empty: no wait but the dispatcher's own retry_backoff, R15). As PullOptions::backoff.
  std::vector<Millis> backoff{};
  /// SPEC R34 (durable brokers): each offer's attempt is saved, synced as commit_sync says,
  /// before the handler is called, so a message whose handler kills the process is
  /// dead-lettered ("max deliveries") once max_deliveries offers were saved, not offered
  /// again after every restart. Costs a commit per offer (concurrent ones share a sync).
  bool durable_attempts = false;
};

/// Options of a pull subscription (workers call poll / ack).
struct PullOptions {
  Headers header_filter;
  Millis ack_timeout{30000};                   // > 0
  int max_deliveries = kDefaultMaxDeliveries;  // >= 1, or 0 for no limit
  StartPosition start;
  /// SPEC R22: poll hands out nothing while the subscription holds this many messages,
  /// every worker's, redeliveries too (0: no limit; at most kMaxInFlight).
  std::size_t max_in_flight = 0;
  /// SPEC R24: after a failure of attempt k (a nack without a delay, an expiry) the message
  /// waits backoff[min(k, size) - 1] before it is offered again (empty: no wait; each entry
  /// 0..kMaxDuration, at most kMaxBackoffSteps).
  std::vector<Millis> backoff{};
  /// SPEC R31: poll hands out a message with a key only while no other message of that key
  /// is held and no lower one of it waits: one message per key in flight, each key's in
  /// offset order, different keys to different workers at once (Pub/Sub ordering keys, SQS
  /// FIFO message groups). Messages without a key are not ordered.
  bool ordered_by_key = false;
  /// SPEC R34 (durable brokers): poll saves the attempts of what it hands out (synced as
  /// commit_sync says) before it returns, so a message whose processing kills the worker's
  /// process is dead-lettered once max_deliveries hand-outs were saved. As PushOptions'.
  bool durable_attempts = false;
  bool operator==(const PullOptions&) const = default;
};

/// SPEC R31: how many messages may wait passed over (with the returned ones) before a poll
/// of an ordered subscription stops at a blocked message instead of passing it over.
inline constexpr std::size_t kMaxPassedOver = 1024;

}  // namespace broker
