// Our broker behind the contenders' common interface: one topic, push subscriptions.
#pragma once

#include <broker/broker.h>

#include <string>
#include <string_view>

#include "common.h"

namespace bench {

/// A Broker with one topic "t" and `subscribers` push subscriptions "s0", "s1", ... on the
/// given dispatcher. Thread-safe publish (the broker is).
class BrokerFanOut {
 public:
  /// Subscribes `subscribers` handlers made by make.
  BrokerFanOut(std::size_t subscribers, const HandlerFactory& make,
               broker::DispatcherOptions dispatcher, broker::TopicOptions topic = {},
               int max_deliveries = broker::kDefaultMaxDeliveries)
      : broker_({nullptr, dispatcher}) {
    broker_.create_topic(kTopic, topic);
    for (std::size_t i = 0; i < subscribers; ++i) {
      broker::PushOptions options;
      options.max_deliveries = max_deliveries;
      std::string name = std::to_string(i);  // not "s" + ...: GCC 12 -Wrestrict false positive
      name.insert(name.begin(), 's');
      broker_.subscribe(
          kTopic, name, [h = make(i)](const broker::Delivery& d) { return h(d.message.payload); },
          options);
    }
  }

  /// Publishes a copy of payload (the broker takes its payload by value).
  void publish(std::string_view payload) { broker_.publish(kTopic, std::string(payload)); }

  /// The broker, for stats and extra subscriptions.
  broker::Broker& broker() { return broker_; }

  static constexpr const char* kTopic = "t";

 private:
  broker::Broker broker_;
};

/// Lane dispatcher options (a thread per subscription).
inline broker::DispatcherOptions lane(broker::Millis backoff = broker::Millis{5}) {
  broker::DispatcherOptions o;
  o.kind = broker::DispatcherOptions::Kind::kLane;
  o.retry_backoff = backoff;
  return o;
}

/// Pool dispatcher options (threads shared by every subscription).
inline broker::DispatcherOptions pool(std::size_t threads = 2,
                                      broker::Millis backoff = broker::Millis{5}) {
  broker::DispatcherOptions o;
  o.kind = broker::DispatcherOptions::Kind::kPool;
  o.pool_threads = threads;
  o.retry_backoff = backoff;
  return o;
}

}  // namespace bench
