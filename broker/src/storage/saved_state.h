// What the journal says exists: topics, subscriptions, positions and dead letters.
#pragma once

#include <cstdint>
#include <map>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

#include "broker/message.h"
#include "broker/options.h"
#include "broker/stats.h"

namespace broker::storage {

/// A subscription (or push group) as last committed.
struct SavedSubscription {
  std::string name;
  bool pull = false;
  bool group = false;
  Headers header_filter;
  int max_deliveries = kDefaultMaxDeliveries;
  Millis ack_timeout{0};
  std::size_t max_in_flight = 0;  // pull only (R22)
  std::vector<Millis> backoff{};  // R24
  bool ordered_by_key = false;    // pull only (R31)
  bool durable_attempts = false;  // R34
  StartPosition start;  // as asked for: a repeated subscribe compares it (OptionsMismatch)
  Offset position = 0;  // everything below is confirmed, dead-lettered or skipped
  std::map<Offset, int> attempts;  // offers made so far of offsets >= position
  std::vector<DeadLetter> dead;    // in the order they died
};

/// A topic and its subscriptions in creation order.
struct SavedTopic {
  std::string name;
  std::uint64_t id = 0;  // names its directory, "t<id>": a new topic of an old name is new
  TopicOptions options;
  std::string parent;  // R29: a partition's partitioned topic ("" if none)
  std::vector<SavedSubscription> subscriptions;
  SavedSubscription* find(const std::string& sub);
};

/// Everything the journal records, in creation order.
struct SavedState {
  std::vector<SavedTopic> topics;
  std::uint64_t next_id = 0;
  SavedTopic* find(const std::string& topic);
};

/// The journal's record bodies. Each encode_* has a matching case in apply_record().
/// A partitioned topic's record also makes its partitions, with ids id + 1 + p (R29).
std::string encode_topic_created(const std::string& name, std::uint64_t id,
                                 const TopicOptions& options);
std::string encode_topic_deleted(const std::string& name);
/// A new subscription; its position, attempts and dead letters start as in s.
std::string encode_subscribed(const std::string& topic, const SavedSubscription& s);
std::string encode_unsubscribed(const std::string& topic, const std::string& name);
/// A commit: the position, the attempts at or after it, and the dead letters since the
/// previous commit of this subscription, or with `dead_rewritten` all of them (R25).
std::string encode_commit(const std::string& topic, const std::string& name, Offset position,
                          const std::pmr::map<Offset, int>& attempts,
                          const std::vector<DeadLetter>& dead, bool dead_rewritten = false);

/// Applies one record body to state; false if it is malformed or names nothing that exists.
bool apply_record(std::string_view body, SavedState& state);
/// The records that rebuild state from nothing (a compacted journal).
std::vector<std::string> snapshot(const SavedState& state);

}  // namespace broker::storage
