// The broker's internals behind the facade. Lock order (the only one):
//   BrokerImpl::mu_ -> Topic::mu -> SubscriptionState::mu -> TopicLog::mu
//   -> dispatcher locks -> WaitGraph::mu_ / Progress::mu
// No lock is held while a handler runs; a predicate runs under its subscription's mu only.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "dispatcher.h"
#include "sync/sync.h"
#include "topic.h"
#include "wait_graph.h"

namespace broker {

/// Implementation of Broker; see broker.h for the contract of each call.
class BrokerImpl {
 public:
  explicit BrokerImpl(BrokerOptions options);
  ~BrokerImpl();

  void create_topic(const std::string& name, TopicOptions options);
  void delete_topic(const std::string& name);
  std::vector<std::string> topics() const;
  Offset publish(const std::string& topic, std::string payload, Headers headers, std::string key);
  Offset end_offset(const std::string& topic) const;
  Offset oldest_offset(const std::string& topic) const;

  void subscribe(const std::string& topic, const std::string& name, Handler handler,
                 PushOptions options);
  bool unsubscribe(const std::string& topic, const std::string& name);
  void seek(const std::string& topic, const std::string& name, Offset offset);
  std::size_t drain();
  bool wait_idle(Millis timeout);

  void subscribe_pull(const std::string& topic, const std::string& name, PullOptions options);
  std::vector<Received> poll(const std::string& topic, const std::string& sub,
                             const std::string& member, Time now, std::size_t max_messages);
  std::vector<Received> poll_wait(const std::string& topic, const std::string& sub,
                                  const std::string& member, std::size_t max_messages,
                                  Millis timeout);
  bool ack(const std::string& topic, const std::string& sub, Offset offset,
           const std::string& member, Time now);
  bool nack(const std::string& topic, const std::string& sub, Offset offset,
            const std::string& member, Time now);
  bool extend(const std::string& topic, const std::string& sub, Offset offset,
              const std::string& member, Time now, Millis extension);
  std::vector<Expired> expire(Time now);

  SubscriptionStats stats(const std::string& topic, const std::string& name) const;
  std::vector<DeadLetter> dead_letters(const std::string& topic, const std::string& name) const;
  std::vector<std::string> subscriptions(const std::string& topic) const;
  const Clock& clock() const { return *clock_; }

 private:
  std::shared_ptr<Topic> find_topic(const std::string& name) const EXCLUDES(mu_);
  std::vector<std::shared_ptr<Topic>> topic_snapshot() const EXCLUDES(mu_);
  /// The state that name resolves to on topic. Throws UnknownTopic, UnknownSubscription.
  std::shared_ptr<SubscriptionState> find_state(const std::string& topic,
                                                const std::string& name) const;
  /// Like find_state, and throws WrongKind unless it is a pull subscription.
  std::shared_ptr<SubscriptionState> pull_state(const std::string& topic,
                                                const std::string& name) const;
  std::vector<Received> poll_unlocked(SubscriptionState& s, const std::string& member, Time now,
                                     std::size_t max_messages);
  bool all_idle() const;

  /// Wakes wait_idle after offers. Shared with the dispatcher's threads: a handler abandoned
  /// on timeout may end after the broker is gone, and its thread still signals progress.
  struct Progress {
    sync::Mutex mu;
    sync::CondVar cv;
    std::atomic<int> waiters{0};
    void notify();
  };
  // Declared before dispatcher_, which captures it.
  const std::shared_ptr<Progress> progress_ = std::make_shared<Progress>();
  const std::shared_ptr<Clock> clock_;
  std::unique_ptr<Dispatcher> dispatcher_;
  WaitGraph waits_;

  mutable sync::Mutex mu_;
  std::vector<std::shared_ptr<Topic>> order_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Topic>> topics_ GUARDED_BY(mu_);

};

}  // namespace broker
