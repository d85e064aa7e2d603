// A topic: its log and its subscriptions in creation order.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/options.h"
#include "subscription_state.h"
#include "sync/sync.h"
#include "topic_log.h"

namespace broker {

/// One topic. Lock order: the broker's table lock, then mu, then a subscription's mu,
/// then the log's mu. The log is used without mu (it has its own leaf lock), so publish
/// never takes mu on its hot path with the synchronous dispatcher.
struct Topic {
  Topic(std::string n, TopicOptions o)
      : name(std::move(n)), options(o), log(std::make_shared<TopicLog>(o)) {}

  const std::string name;
  const TopicOptions options;
  const std::shared_ptr<TopicLog> log;

  sync::Mutex mu;
  bool deleted GUARDED_BY(mu) = false;
  /// Subscription states (push, pull, push groups) in creation order.
  std::vector<std::shared_ptr<SubscriptionState>> states GUARDED_BY(mu);
  /// Subscription or group member name -> its state.
  std::map<std::string, std::shared_ptr<SubscriptionState>> by_name GUARDED_BY(mu);
  /// Push group name -> its state.
  std::map<std::string, std::shared_ptr<SubscriptionState>> groups GUARDED_BY(mu);
  /// Number of push states, so publish can skip notifying when there are none.
  std::size_t push_states GUARDED_BY(mu) = 0;
};

}  // namespace broker
