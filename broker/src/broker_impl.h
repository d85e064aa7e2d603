// The broker's internals behind the facade. Lock order (the only one):
//   BrokerImpl::mu_ -> Topic::mu (a partitioned topic's before its partitions', R29)
//   -> ConsumerGroup::mu (R32) -> SubscriptionState::mu -> TopicLog::mu
// SubscriptionState::mu: one at a time, except a rebalance, which holds all of its group's
// partition subscriptions' at once, ascending by partition (R32: one step for every answer).
//   -> dispatcher locks -> WaitGraph::mu_ / Progress::mu / ExpiryTimer::mu_
// TopicLog::mu is a spin lock (sync::SpinLock: held for a few stores, released with a plain
// store). TopicLog::wait_mu_ (a long poll's sleep) -> TopicLog::mu; a poll takes wait_mu_
// holding no other lock, an append takes it after releasing TopicLog::mu, a hand-back that
// wakes long polls (TopicLog::wake_waiters) after releasing its SubscriptionState::mu.
// TopicTable's shard locks: after mu_ (ascending), a leaf: lookups by name take one alone.
// A log's SegmentSpares lock: a leaf, after anything (a segment's last holder may drop it
// under any lock).
// Durable brokers (storage/): storage::Store::mu_ (the journal) after the broker's, a
// topic's or a subscription's mu; SegmentLog::path_mu_ after TopicLog::mu; each Syncer's
// mu_ after any of those; the file systems' own mutexes last. A sync (fdatasync) runs with
// none of the broker's, topics' or subscriptions' locks held, except for control calls
// (create_topic, delete_topic, subscribe, unsubscribe, a group's first join_group), which are
// rare.
// No lock is held while a handler or the injected clock runs; a predicate runs under its
// subscription's mu only. The calls are split by concern: topics.cpp, push.cpp, pull.cpp,
// controls.cpp, groups.cpp, observation.cpp.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "dispatcher.h"
#include "expiry_timer.h"
#include "storage/store.h"
#include "sync/sync.h"
#include "topic.h"
#include "topic_table.h"
#include "wait_graph.h"

namespace broker {

/// Implementation of Broker; see broker.h for the contract of each call.
class BrokerImpl {
 public:
  explicit BrokerImpl(BrokerOptions options);
  ~BrokerImpl();

  // topics.cpp
  void create_topic(const std::string& name, TopicOptions options);
  bool create_topic_if_absent(const std::string& name, TopicOptions options);
  void delete_topic(const std::string& name);
  std::vector<std::string> topics() const;
  Offset publish(const std::string& topic, std::string_view payload, const Headers& headers,
                 std::string_view key);
  Placement send(const std::string& topic, std::string_view payload, const Headers& headers,
                 std::string_view key);
  /// The topic called name, partitioned or not (one TopicTable shard's lock, not mu_).
  /// Throws UnknownTopic.
  std::shared_ptr<Topic> find_any_topic(const std::string& name) const;
  /// send through a Publisher: `found` is the topic it found last (null at first); looked up
  /// by name again if null or deleted. Throws UnknownTopic (found is then null).
  Placement send(std::shared_ptr<Topic>& found, const std::string& name, std::string_view payload,
                 const Headers& headers, std::string_view key);
  Offset publish_to(const std::string& topic, std::uint32_t partition, std::string_view payload,
                    const Headers& headers, std::string_view key);
  std::uint32_t partitions(const std::string& topic) const;
  Offset end_offset(const std::string& topic) const;
  Offset oldest_offset(const std::string& topic) const;

  // push.cpp
  /// saved: options are replaced, under the topic's lock, by those saved for the name (R20).
  void subscribe(const std::string& topic, const std::string& name, Handler handler,
                 PushOptions options, bool saved = false);
  void resubscribe(const WaitingSubscription& waiting, Handler handler, const std::string& member);
  bool unsubscribe(const std::string& topic, const std::string& name);
  void seek(const std::string& topic, const std::string& name, Offset offset);
  std::size_t drain();
  bool wait_idle(Millis timeout);
  bool wait_delivered(Millis timeout);

  // pull.cpp
  void subscribe_pull(const std::string& topic, const std::string& name, PullOptions options);
  std::vector<Received> poll(const std::string& topic, const std::string& sub,
                             const std::string& member, std::size_t max_messages, Time now);
  std::vector<Received> poll_wait(const std::string& topic, const std::string& sub,
                                  const std::string& member, std::size_t max_messages,
                                  Millis timeout);
  AckResult ack(const Receipt& receipt, Time now);
  AckResult nack(const Receipt& receipt, Time now, std::optional<Millis> delay);
  AckResult term(const Receipt& receipt, Time now);
  AckResult extend(const Receipt& receipt, Time now, Millis extension);
  std::vector<Expired> expire(Time now);
  /// expire(now), and `next`: the earliest deadline a message still holds afterwards (for
  /// the ExpiryTimer). Locks each pull subscription's mu in turn.
  std::vector<Expired> expire(Time now, std::optional<Time>& next);

  // groups.cpp
  /// handler: null for a pull group's member, else the push member's handler.
  Membership join_group(const std::string& topic, const std::string& group,
                        const std::string& member, const Handler* handler,
                        const GroupOptions& options);
  bool leave_group(const std::string& topic, const std::string& group, const std::string& member);
  Membership membership(const std::string& topic, const std::string& group,
                        const std::string& member) const;
  std::vector<Received> poll_group(const std::string& topic, const std::string& group,
                                   const std::string& member, std::size_t max_messages, Time now);
  GroupStats group_stats(const std::string& topic, const std::string& group) const;

  // controls.cpp
  std::size_t redrive(const std::string& topic, const std::string& name);
  std::vector<Offset> redrive_to(const std::string& topic, const std::string& name,
                                 const std::string& to_topic);
  std::size_t purge_dead_letters(const std::string& topic, const std::string& name);
  bool set_paused(const std::string& topic, const std::string& name, bool paused);
  Lag lag(const std::string& topic, const std::string& name, Time now) const;
  Offset offset_for_time(const std::string& topic, Time time) const;
  Offset seek_to_time(const std::string& topic, const std::string& name, Time time);

  // observation.cpp
  SubscriptionStats stats(const std::string& topic, const std::string& name) const;
  std::vector<DeadLetter> dead_letters(const std::string& topic, const std::string& name) const;
  std::vector<std::string> subscriptions(const std::string& topic) const;
  std::vector<WaitingSubscription> waiting_for_handler() const;
  const Clock& clock() const { return *clock_; }
  const RecoveryReport& recovery() const { return recovery_; }
  /// R33: throws IoError naming the store's first failure, if it has failed (durable
  /// brokers; one acquire load otherwise). Every public call begins with it.
  void check_storage() const {
    if (store_) store_->check();
  }
  std::optional<std::string> storage_failure() const {
    return store_ ? store_->failure() : std::nullopt;
  }

 private:
  /// The topic called name, which holds a log (not a partitioned topic's router). Throws
  /// UnknownTopic, WrongKind (a partitioned topic: name one of its partitions, R29).
  std::shared_ptr<Topic> find_topic(const std::string& name) const;
  /// send to a topic found already.
  Placement send_to(Topic& topic, std::string_view payload, const Headers& headers,
                    std::string_view key);
  /// Appends to the topic that holds a log, then wakes its push subscriptions.
  Offset append(Topic& t, std::string_view payload, const Headers& headers, std::string_view key);
  /// R32: the consumer group called group on topic. Throws UnknownTopic,
  /// UnknownSubscription.
  std::shared_ptr<ConsumerGroup> find_group(const std::string& topic,
                                            const std::string& group) const;
  /// R32: a new (push or pull) group over t's partitions (t itself if it has none),
  /// adopting the subscriptions called group it finds there (a pull one, or a push one a
  /// restart left without handler: `resumed` gets the dormant states it replaced, for the
  /// dispatcher). Throws WrongKind, DuplicateSubscription, OptionsMismatch,
  /// OffsetOutOfRange, IoError.
  std::shared_ptr<ConsumerGroup> make_group(const std::shared_ptr<Topic>& t,
                                            const std::string& group, bool push,
                                            const GroupOptions& options, StateList& resumed)
      REQUIRES(t->mu);
  /// R32: the group's subscription on pt: the one there (adopted), else a new one at
  /// `cursor`. Throws WrongKind, DuplicateSubscription, OptionsMismatch, IoError.
  StatePtr group_subscription(Topic& pt, const std::string& group, bool push,
                              const GroupOptions& options, Offset cursor, StateList& resumed)
      REQUIRES(pt.mu);
  /// R32: gives g's partitions to `members` under g's assignor as its next generation:
  /// messages held on a partition that is revoked come back (R7, reason "revoked").
  /// Returns the saves to wait for once no lock is held.
  std::vector<std::pair<StatePtr, std::uint64_t>> apply_rebalance(ConsumerGroup& g,
                                                                  std::vector<std::string> members,
                                                                  Time now) REQUIRES(g.mu);
  /// Topics in creation order (a copy).
  std::vector<std::shared_ptr<Topic>> topic_snapshot() const EXCLUDES(mu_);
  /// The state that name (a subscription, member or group name) resolves to on topic.
  /// Throws UnknownTopic, UnknownSubscription.
  StatePtr find_state(const std::string& topic, const std::string& name) const;
  /// Like find_state, and throws WrongKind unless it is a pull subscription.
  StatePtr pull_state(const std::string& topic, const std::string& name) const;
  /// Whether no push subscription runs an offer or has a message it could be offered now;
  /// with backing_off_is_idle, a subscription backing off counts as having none.
  bool all_idle(bool backing_off_is_idle) const;
  /// Waits (real time) until all_idle(backing_off_is_idle) or timeout.
  bool wait_until_idle(Millis timeout, bool backing_off_is_idle);
  /// Durable brokers: rebuilds the topics and subscriptions the store read back (R20).
  void recover(storage::Store::Opened& opened);
  /// create_topic's body, once the options are checked: DuplicateTopic if a name is taken.
  void create_topic_locked(const std::string& name, const TopicOptions& options) REQUIRES(mu_);
  /// A topic that holds a log: in memory, or durable with storage id `id` (R29: `parent`
  /// names the partitioned topic it is a partition of).
  std::shared_ptr<Topic> make_topic(const std::string& name, const TopicOptions& options,
                                    std::uint64_t id, const std::string& parent) const;
  /// A subscription state of topic t; durable topics get the store as their commit sink.
  StatePtr make_state(const Topic& t, SubscriptionConfig config, Offset cursor) const;
  /// The record a durable store keeps of a new subscription.
  static storage::SavedSubscription saved_of(const SubscriptionConfig& c, Offset cursor);

  /// Wakes wait_idle after offers. Shared with the dispatcher's threads: a handler abandoned
  /// on timeout may end after the broker is gone, and its thread still signals progress.
  struct Progress {
    sync::Mutex mu;
    sync::CondVar cv;
    // How many wait_until_idle calls are waiting. Acquire/acq_rel: a notifier that reads 0
    // skips the lock; a waiter that registered after that read looks at the state itself
    // before its first wait, and waits in 5 ms slices, so a skipped notify costs at most one.
    sync::Atomic<int> waiters{0};
    void notify();
  };

  // Constant after construction. progress_ is declared before dispatcher_, which captures it.
  const std::shared_ptr<Progress> progress_ = std::make_shared<Progress>();
  const std::shared_ptr<Clock> clock_;
  const std::unique_ptr<Dispatcher> dispatcher_;
  // What a publish does to wake push subscriptions (dispatcher_'s, read at every publish).
  const bool publish_notifies_ = !dispatcher_->synchronous();
  const bool notify_only_sleepers_ = dispatcher_->watches_log();
  WaitGraph waits_;
  // Durable brokers only (null otherwise); shared with the subscription states it saves.
  std::shared_ptr<storage::Store> store_;
  RecoveryReport recovery_;

  // mu_ serializes the changes of the topic set and guards its order; lookups by name go
  // to topics_ alone (its shards' locks come after mu_, and nothing is locked under them).
  mutable sync::Mutex mu_;
  std::vector<std::shared_ptr<Topic>> order_ GUARDED_BY(mu_);
  TopicTable topics_;

  // Last: its thread calls expire() on this object, so it stops first in the destructor.
  std::unique_ptr<ExpiryTimer> expiry_;
};

}  // namespace broker
