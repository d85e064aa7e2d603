// The constant options of a subscription state, built once from push or pull options.
#pragma once

#include <optional>
#include <string>

#include "broker/options.h"
#include "topic_log.h"

namespace broker {

class BrokerImpl;

/// How a subscription's messages are consumed.
enum class Kind { kPush, kPull };

/// Options of one subscription state (push subscription, push group or pull
/// subscription), constant after construction.
struct SubscriptionConfig {
  const BrokerImpl* broker = nullptr;  // the broker it belongs to (re-entrancy is per broker)
  Kind kind = Kind::kPush;
  std::string topic;
  std::string name;  // subscription name, or the group name of a push group
  Headers header_filter;
  Predicate predicate;
  int max_deliveries = kDefaultMaxDeliveries;
  Millis ack_timeout{0};          // pull only
  std::size_t max_in_flight = 0;  // pull only (SPEC R22; 0: no limit)
  std::vector<Millis> backoff{};  // SPEC R24
  bool ordered_by_key = false;    // pull only (SPEC R31)
  bool durable_attempts = false;  // SPEC R34
  StartPosition start;
  bool group = false;

  /// A push subscription called name, or the push group options.group.
  static SubscriptionConfig push(const BrokerImpl* broker, const std::string& topic,
                                 const std::string& name, const PushOptions& options);
  /// A pull subscription.
  static SubscriptionConfig pull(const BrokerImpl* broker, const std::string& topic,
                                 const std::string& name, const PullOptions& options);
};

/// Throws InvalidArgument for push options no subscription may have (SPEC R14).
void validate(const std::string& name, const Handler& handler, const PushOptions& options);
/// Throws InvalidArgument for pull options no subscription may have.
void validate(const std::string& name, const PullOptions& options);

/// The first option in which a group's config and a joining member's options differ, or
/// none. Names as OptionsMismatch::option() reports them.
std::optional<std::string> first_mismatch(const SubscriptionConfig& c, const PushOptions& o);
/// The same for an existing pull subscription and the options of a repeated subscribe_pull.
std::optional<std::string> first_mismatch(const SubscriptionConfig& c, const PullOptions& o);

/// SPEC R4: the cursor a new subscription starts at. Throws OffsetOutOfRange.
Offset resolve_start(const TopicLog& log, const StartPosition& start);

}  // namespace broker
