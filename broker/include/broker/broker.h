// The broker facade: the only class outside code calls.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "broker/clock.h"
#include "broker/errors.h"
#include "broker/message.h"
#include "broker/options.h"
#include "broker/stats.h"

namespace broker {

/// Which dispatcher runs push deliveries.
struct DispatcherOptions {
  enum class Kind { kSynchronous, kLane, kPool };
  Kind kind = Kind::kSynchronous;
  std::size_t pool_threads = 2;        // kPool only
  Millis handler_timeout{0};           // kPool only; 0 = no timeout. Real (steady) time.
  Millis retry_backoff{5};  // kLane/kPool: a failure is re-offered at once; a second failure
                            // in a row waits this long first (real time)
};

/// Construction options of a Broker.
struct BrokerOptions {
  std::shared_ptr<Clock> clock;  // null: a SteadyClock
  DispatcherOptions dispatcher;
};

/// One pull-side state change made by expire().
struct Expired {
  std::string topic;
  std::string subscription;
  Offset offset = 0;
  bool dead_lettered = false;  // false: returned to the front of the queue
  bool operator==(const Expired&) const = default;
};

class BrokerImpl;

/// An in-process publish-subscribe broker with at-least-once delivery (see SPEC.md).
/// Safe for concurrent use from any number of threads without external locking.
/// Every call that throws a broker::Error has changed nothing.
/// Memory order: everything a publisher did before publish() returned is visible to every
/// handler or poller that receives that message.
class Broker {
 public:
  explicit Broker(BrokerOptions options = {});
  /// Stops the dispatcher's threads after their current handler call; drops pending work.
  /// A handler abandoned after handler_timeout keeps running on its own detached thread
  /// until it returns; it must not call this broker once the destructor has returned.
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // ---- topics ----
  /// Creates an empty topic. Throws InvalidArgument (empty name), DuplicateTopic.
  void create_topic(const std::string& name, TopicOptions options = {});
  /// Deletes a topic that has no subscriptions. Throws UnknownTopic, TopicInUse.
  void delete_topic(const std::string& name);
  /// Topic names in creation order.
  [[nodiscard]] std::vector<std::string> topics() const;
  /// Appends a message and returns its offset. Never waits for a subscriber; may drop the
  /// oldest messages to keep the retention bound. Throws UnknownTopic (nothing appended).
  Offset publish(const std::string& topic, std::string payload, Headers headers = {},
                 std::string key = {});
  /// One past the newest offset (the offset the next publish gets). Throws UnknownTopic.
  [[nodiscard]] Offset end_offset(const std::string& topic) const;
  /// The oldest offset still kept. Throws UnknownTopic.
  [[nodiscard]] Offset oldest_offset(const std::string& topic) const;

  // ---- push subscriptions ----
  /// Subscribes a handler by name. Throws UnknownTopic, InvalidArgument, DuplicateSubscription,
  /// OffsetOutOfRange, OptionsMismatch (joining a group with other options).
  void subscribe(const std::string& topic, const std::string& name, Handler handler,
                 PushOptions options = {});
  /// Removes a push or pull subscription; returns whether it existed. After it returns no
  /// offer starts for it; an offer running on another thread has finished, unless waiting
  /// for it could deadlock (then that offer's handler is already running and its result
  /// is ignored). Safe from inside any handler.
  bool unsubscribe(const std::string& topic, const std::string& name);
  /// Moves the subscription's (or its group's) next offset; forgets what it held or had
  /// returned. Throws UnknownTopic, UnknownSubscription, OffsetOutOfRange.
  void seek(const std::string& topic, const std::string& name, Offset offset);
  /// Synchronous dispatcher only: delivers everything pending on this thread; returns the
  /// number of confirmed offers. Throws NotSynchronous, ReentrantDrain.
  std::size_t drain();
  /// Threaded dispatchers: waits until no push subscription has a message it could be
  /// offered now (all delivered, or failing and backing off). Returns false on timeout.
  bool wait_idle(Millis timeout);

  // ---- pull subscriptions ----
  /// Creates a pull subscription, or returns silently if one with equal options exists.
  /// Throws UnknownTopic, InvalidArgument, OptionsMismatch, WrongKind, OffsetOutOfRange.
  void subscribe_pull(const std::string& topic, const std::string& name, PullOptions options);
  /// Hands up to max_messages ready messages to member: returned ones first, in offset
  /// order, then new ones. Throws UnknownTopic, UnknownSubscription, WrongKind,
  /// InvalidArgument (max_messages == 0 or empty member).
  std::vector<Received> poll(const std::string& topic, const std::string& subscription,
                             const std::string& member, Time now, std::size_t max_messages);
  /// Like poll at the clock's time, but waits up to timeout (real time) for a message.
  std::vector<Received> poll_wait(const std::string& topic, const std::string& subscription,
                                  const std::string& member, std::size_t max_messages,
                                  Millis timeout);
  /// Confirms a held message. True only for its holder before its deadline.
  bool ack(const std::string& topic, const std::string& subscription, Offset offset,
           const std::string& member, Time now);
  /// Hands a held message back at once (a failed delivery). Same acceptance rule as ack.
  bool nack(const std::string& topic, const std::string& subscription, Offset offset,
            const std::string& member, Time now);
  /// Sets a held message's deadline to now + extension. Same acceptance rule as ack.
  bool extend(const std::string& topic, const std::string& subscription, Offset offset,
              const std::string& member, Time now, Millis extension);
  /// Returns every held message whose deadline is <= now to the front of its queue, or to
  /// the dead letters when it has had max_deliveries offers. Topics in creation order,
  /// subscriptions in creation order, offsets ascending.
  std::vector<Expired> expire(Time now);

  // ---- observation ----
  /// Counters of a subscription (a group member reports its group). Throws UnknownTopic,
  /// UnknownSubscription.
  [[nodiscard]] SubscriptionStats stats(const std::string& topic, const std::string& name) const;
  /// Dead letters in the order they died. Throws UnknownTopic, UnknownSubscription.
  [[nodiscard]] std::vector<DeadLetter> dead_letters(const std::string& topic,
                                                     const std::string& name) const;
  /// Subscription names of a topic in subscription order. Throws UnknownTopic.
  [[nodiscard]] std::vector<std::string> subscriptions(const std::string& topic) const;
  /// The injected clock.
  [[nodiscard]] const Clock& clock() const;

 private:
  std::unique_ptr<BrokerImpl> impl_;
};

}  // namespace broker
