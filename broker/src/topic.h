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
  /// The push states, rebuilt on (un)subscribe, so publish copies one pointer under mu
  /// instead of building a list (copy on write).
  std::shared_ptr<const std::vector<std::shared_ptr<SubscriptionState>>> push_states
      GUARDED_BY(mu) = std::make_shared<std::vector<std::shared_ptr<SubscriptionState>>>();

  /// Rebuilds push_states from states.
  void refresh_push_states() REQUIRES(mu) {
    auto push = std::make_shared<std::vector<std::shared_ptr<SubscriptionState>>>();
    for (const auto& s : states) {
      if (s->config().kind == Kind::kPush) push->push_back(s);
    }
    push_states = std::move(push);
  }
};

}  // namespace broker
