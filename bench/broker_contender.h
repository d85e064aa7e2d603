// Our broker behind the contenders' common interface: one topic, push subscriptions.
#pragma once

#include <broker/broker.h>

#include <string>
#include <string_view>
#include <utility>

#include "common.h"

namespace bench {

/// A Broker with one topic "t" and `subscribers` push subscriptions "s0", "s1", ... built
/// with the given options (lane() or pool() below); it publishes through a broker::Publisher,
/// as a program that publishes many messages to one topic would. One publishing thread.
class BrokerFanOut {
 public:
  /// Subscribes `subscribers` handlers made by make.
  BrokerFanOut(std::size_t subscribers, const HandlerFactory& make, broker::BrokerOptions options,
               broker::TopicOptions topic = {}, int max_deliveries = broker::kDefaultMaxDeliveries)
      : broker_(std::move(options)), publisher_(with_topic(broker_, topic)) {
    for (std::size_t i = 0; i < subscribers; ++i) {
      broker::PushOptions options;
      options.max_deliveries = max_deliveries;
      std::string name = std::to_string(i);  // not "s" + ...: GCC 12 -Wrestrict false positive
      name.insert(name.begin(), 's');
      broker_.subscribe(
          kTopic, name,
          [h = make(i)](const broker::Delivery& d) { return h(d.message->payload()); }, options);
    }
  }

  /// Publishes payload (the broker copies the view once, into its log).
  void publish(std::string_view payload) { publisher_.publish(payload); }

  /// The broker, for stats and extra subscriptions.
  broker::Broker& broker() { return broker_; }

  static constexpr const char* kTopic = "t";

 private:
  static broker::Publisher with_topic(broker::Broker& b, const broker::TopicOptions& topic) {
    b.create_topic(kTopic, topic);
    return b.publisher(kTopic);
  }

  broker::Broker broker_;
  broker::Publisher publisher_;  // after broker_: destroyed before it
};

/// A broker on the lane dispatcher (a thread per subscription) and a SteadyClock.
inline broker::BrokerOptions lane(broker::Millis backoff = broker::Millis{5}) {
  return broker::BrokerOptions::lane().with_retry_backoff(backoff);
}

/// A broker on the pool dispatcher (threads shared by every subscription), SteadyClock.
inline broker::BrokerOptions pool(std::size_t threads = 2,
                                  broker::Millis backoff = broker::Millis{5}) {
  return broker::BrokerOptions::pool(threads).with_retry_backoff(backoff);
}

}  // namespace bench
