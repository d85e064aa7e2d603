#include "subscription_config.h"

#include "broker/errors.h"

namespace broker {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument(what);
}

void validate_backoff(const std::vector<Millis>& backoff) {
  require(backoff.size() <= kMaxBackoffSteps, "backoff takes at most kMaxBackoffSteps");
  for (Millis wait : backoff) {
    require(wait.count() >= 0 && wait <= kMaxDuration, "backoff waits must be 0..kMaxDuration");
  }
}

}  // namespace

SubscriptionConfig SubscriptionConfig::push(const BrokerImpl* broker, const std::string& topic,
                                            const std::string& name, const PushOptions& options) {
  SubscriptionConfig c;
  c.broker = broker;
  c.kind = Kind::kPush;
  c.topic = topic;
  c.name = options.group.empty() ? name : options.group;
  c.header_filter = options.header_filter;
  c.predicate = options.filter;
  c.max_deliveries = options.max_deliveries;
  c.start = options.start;
  c.group = !options.group.empty();
  c.backoff = options.backoff;
  c.durable_attempts = options.durable_attempts;
  return c;
}

SubscriptionConfig SubscriptionConfig::pull(const BrokerImpl* broker, const std::string& topic,
                                            const std::string& name, const PullOptions& options) {
  SubscriptionConfig c;
  c.broker = broker;
  c.kind = Kind::kPull;
  c.topic = topic;
  c.name = name;
  c.header_filter = options.header_filter;
  c.max_deliveries = options.max_deliveries;
  c.ack_timeout = options.ack_timeout;
  c.start = options.start;
  c.max_in_flight = options.max_in_flight;
  c.backoff = options.backoff;
  c.ordered_by_key = options.ordered_by_key;
  c.durable_attempts = options.durable_attempts;
  return c;
}

void validate(const std::string& name, const Handler& handler, const PushOptions& options) {
  require(!name.empty(), "subscription name must not be empty");
  require(static_cast<bool>(handler), "handler must not be empty");
  require(options.max_deliveries >= 0, "max_deliveries must be >= 0");
  require(options.group.empty() || !options.filter, "a group takes no predicate");
  validate_backoff(options.backoff);
}

void validate(const std::string& name, const PullOptions& options) {
  require(!name.empty(), "subscription name must not be empty");
  require(options.ack_timeout.count() > 0, "ack_timeout must be > 0");
  require(options.ack_timeout <= kMaxDuration, "ack_timeout must be <= kMaxDuration");
  require(options.max_deliveries >= 0, "max_deliveries must be >= 0");
  require(options.max_in_flight <= kMaxInFlight, "max_in_flight must be <= kMaxInFlight");
  validate_backoff(options.backoff);
}

std::optional<std::string> first_mismatch(const SubscriptionConfig& c, const PushOptions& o) {
  if (c.header_filter != o.header_filter) return "header_filter";
  if (c.max_deliveries != o.max_deliveries) return "max_deliveries";
  if (!(c.start == o.start)) return "start";
  if (c.backoff != o.backoff) return "backoff";
  if (c.durable_attempts != o.durable_attempts) return "durable_attempts";
  return std::nullopt;
}

std::optional<std::string> first_mismatch(const SubscriptionConfig& c, const PullOptions& o) {
  if (c.header_filter != o.header_filter) return "header_filter";
  if (c.ack_timeout != o.ack_timeout) return "ack_timeout";
  if (c.max_deliveries != o.max_deliveries) return "max_deliveries";
  if (!(c.start == o.start)) return "start";
  if (c.max_in_flight != o.max_in_flight) return "max_in_flight";
  if (c.backoff != o.backoff) return "backoff";
  if (c.ordered_by_key != o.ordered_by_key) return "ordered_by_key";
  if (c.durable_attempts != o.durable_attempts) return "durable_attempts";
  return std::nullopt;
}

Offset resolve_start(const TopicLog& log, const StartPosition& start) {
  switch (start.kind) {
    case StartPosition::Kind::kEnd:
      return log.end();
    case StartPosition::Kind::kBeginning:
      return log.oldest();
    case StartPosition::Kind::kOffset:
      break;
  }
  if (start.offset < log.oldest() || start.offset > log.end()) {
    throw OffsetOutOfRange("start offset " + std::to_string(start.offset) + " outside [" +
                           std::to_string(log.oldest()) + ", " + std::to_string(log.end()) + "]");
  }
  return start.offset;
}

}  // namespace broker
