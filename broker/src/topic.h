// A topic: its log and its subscriptions in creation order.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "broker/options.h"
#include "consumer_group.h"
#include "subscription_state.h"
#include "sync/sync.h"
#include "topic_log.h"

namespace broker {

using StatePtr = std::shared_ptr<SubscriptionState>;
using StateList = std::vector<StatePtr>;

/// One topic. Lock order: the broker's table lock, then mu, then a subscription's mu,
/// then the log's mu. The log is used without mu (it has its own leaf lock), so publish
/// never takes mu on its hot path with the synchronous dispatcher.
class Topic {
 public:
  /// An in-memory topic, or one with the given (durable) log and storage id; with `parts`,
  /// a partitioned topic whose partitions those are (R29), and `of` names the partitioned
  /// topic a partition belongs to.
  Topic(std::string n, TopicOptions o, std::shared_ptr<TopicLog> l = nullptr, std::uint64_t id = 0,
        std::vector<std::shared_ptr<Topic>> parts = {}, std::string of = {})
      : name(std::move(n)),
        options(o),
        log(l ? std::move(l) : std::make_shared<TopicLog>(o)),
        storage_id(id),
        partitions(std::move(parts)),
        parent(std::move(of)) {}

  // Constant after construction.
  const std::string name;
  const TopicOptions options;
  const std::shared_ptr<TopicLog> log;  // a partitioned topic's stays empty
  const std::uint64_t storage_id;       // its directory in the store (durable brokers)
  /// R29: the partitions of a partitioned topic, in order; empty for any other topic.
  const std::vector<std::shared_ptr<Topic>> partitions;
  /// R29: the partitioned topic this one is a partition of ("" if none).
  const std::string parent;

  /// R29: keyless publishes to a partitioned topic take partitions round robin from here.
  /// Relaxed: only the spread matters, no other memory is published through it.
  sync::Atomic<std::uint64_t> round_robin{0};

  sync::Mutex mu;
  /// Set once delete_topic took it out of the table (before that call returns), under mu.
  /// Publishers that keep the topic read it without mu: the next publish through one looks
  /// the name up again. Release/acquire: nothing else is published through it; a publish
  /// that reads false appends as a publish by name that found the topic just before the
  /// delete would.
  sync::Atomic<bool> dropped{false};
  /// Whether delete_topic dropped it: a subscribe or group call that found the topic before
  /// the delete must refuse it. Under mu, which the delete held to set it (so relaxed).
  [[nodiscard]] bool is_deleted() const REQUIRES(mu) {
    return dropped.load(std::memory_order_relaxed);
  }
  /// Subscription or group member name -> its state. Hashed: a subscribe or unsubscribe
  /// among 100k subscriptions finds its name without walking a tree of cold nodes.
  std::unordered_map<std::string, StatePtr> by_name GUARDED_BY(mu);
  /// Push group name -> its state.
  std::map<std::string, StatePtr> groups GUARDED_BY(mu);
  /// R32: consumer group name -> the group (over this topic's partitions, or the topic).
  std::map<std::string, std::shared_ptr<ConsumerGroup>> consumer_groups GUARDED_BY(mu);

  /// The states of kind k in creation order: a copy, for use without mu. Locks mu.
  StateList snapshot(Kind k) EXCLUDES(mu) {
    sync::MutexLock lock(mu);
    if (k == Kind::kPush) return *push_list();
    StateList out;
    for (const auto& [seq, s] : states_) {
      if (s->config().kind == k) out.push_back(s);
    }
    return out;
  }
  /// The push states, shared (copy on write): publish copies one pointer. Locks mu.
  std::shared_ptr<const StateList> push_states() EXCLUDES(mu) {
    sync::MutexLock lock(mu);
    return push_list();
  }
  /// Calls f(state) for each push state in creation order, under mu: a publish notifies
  /// them without copying the shared list (a reference count up and down at every message).
  /// f may take only locks that come after a topic's (a dispatcher's) and must not run user
  /// code. Locks mu.
  template <class F>
  void for_each_push_state(F&& f) EXCLUDES(mu) {
    sync::MutexLock lock(mu);
    for (const auto& s : *push_list()) f(s);
  }
  /// Every state in creation order (a copy).
  [[nodiscard]] StateList states() const REQUIRES(mu) {
    StateList out;
    out.reserve(states_.size());
    for (const auto& [seq, s] : states_) out.push_back(s);
    return out;
  }
  [[nodiscard]] std::size_t state_count() const REQUIRES(mu) { return states_.size(); }
  /// The state a call names: a subscription or member name first, then a group's name;
  /// null if neither exists.
  [[nodiscard]] StatePtr resolve(const std::string& name) const REQUIRES(mu) {
    if (auto it = by_name.find(name); it != by_name.end()) return it->second;
    if (auto it = groups.find(name); it != groups.end()) return it->second;
    return nullptr;
  }
  /// Adds a new state at the end of the creation order. O(1) amortized: the push list is
  /// rebuilt lazily, by the next publish, so n subscribes cost O(n) (not O(n^2)).
  void add(StatePtr s) REQUIRES(mu) {
    const SubscriptionState* key = s.get();
    if (s->config().kind == Kind::kPush) push_stale_ = true;
    // Sequences only grow, so the new entry goes at the end: the hint makes it O(1).
    const auto at = states_.emplace_hint(states_.end(), next_seq_++, std::move(s));
    place_of_[key] = at;
  }
  /// Puts `fresh` where `old` was in the creation order (a resumed subscription).
  void replace(const StatePtr& old, StatePtr fresh) REQUIRES(mu) {
    auto it = place_of_.find(old.get());
    if (it == place_of_.end()) return;
    const auto at = it->second;
    place_of_.erase(it);
    place_of_[fresh.get()] = at;
    if (fresh->config().kind == Kind::kPush) push_stale_ = true;
    at->second = std::move(fresh);
  }
  /// Removes a state that has no names left. O(1) amortized (its place is remembered).
  void remove(const StatePtr& s) REQUIRES(mu) {
    auto it = place_of_.find(s.get());
    if (it == place_of_.end()) return;
    states_.erase(it->second);
    place_of_.erase(it);
    if (s->config().kind == Kind::kPush) push_stale_ = true;
    if (s->config().group) groups.erase(s->config().name);
  }

 private:
  const std::shared_ptr<const StateList>& push_list() REQUIRES(mu) {
    if (push_stale_) {
      auto push = std::make_shared<StateList>();
      for (const auto& [seq, s] : states_) {
        if (s->config().kind == Kind::kPush) push->push_back(s);
      }
      push_ = std::move(push);
      push_stale_ = false;
    }
    return push_;
  }

  using Places = std::map<std::uint64_t, StatePtr>;
  Places states_ GUARDED_BY(mu);  // by creation sequence
  // Each state's entry in states_ (map iterators stay valid until their own erase).
  std::unordered_map<const SubscriptionState*, Places::iterator> place_of_ GUARDED_BY(mu);
  std::uint64_t next_seq_ GUARDED_BY(mu) = 0;
  std::shared_ptr<const StateList> push_ GUARDED_BY(mu) = std::make_shared<StateList>();
  bool push_stale_ GUARDED_BY(mu) = false;
};

}  // namespace broker
