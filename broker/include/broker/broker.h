// The broker facade: the only class outside code calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/ack_result.h"
#include "broker/broker_options.h"
#include "broker/clock.h"
#include "broker/errors.h"
#include "broker/group.h"
#include "broker/message.h"
#include "broker/options.h"
#include "broker/partitioner.h"
#include "broker/stats.h"
#include "broker/storage_options.h"

namespace broker {

/// One pull-side state change made by expire().
struct Expired {
  std::string topic;
  std::string subscription;
  Offset offset = 0;
  bool dead_lettered = false;  // false: returned to the front of the queue
  bool operator==(const Expired&) const = default;
};

/// Prints it as `Expired{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Expired& v);

/// Where send() put a message (R29): its partition (0 on a topic without partitions) and
/// its offset within that partition.
struct Placement {
  std::uint32_t partition = 0;
  Offset offset = 0;
  bool operator==(const Placement&) const = default;
};

/// Prints it as `Placement{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Placement& v);

/// A push subscription or push group (R8, R10) that has no handler: a restart brought it
/// back (R20) and no subscribe has resumed it yet. A consumer group's partition (R32) is
/// listed too, by the group's name on the partition's topic, until a member joins.
struct WaitingSubscription {
  std::string topic;
  std::string name;    // the subscription's, or the push group's
  bool group = false;  // a push group: its members subscribe with PushOptions::group = name
  bool operator==(const WaitingSubscription&) const = default;
};

/// Prints it as `WaitingSubscription{topic="t", name="n", group=false}`. Throws what the
/// stream throws.
std::ostream& operator<<(std::ostream& out, const WaitingSubscription& v);

class BrokerImpl;
class Topic;

/// A publisher bound to one topic by name (Broker::publisher): publish() and send() do what
/// Broker::publish(topic(), ...) and Broker::send(topic(), ...) do, without looking the name
/// up at every call (a lookup takes a lock and a reference count, which under load cost a
/// publish about a third of its time). It keeps the topic it found until that topic is
/// deleted; then its next call looks the name up again (UnknownTopic while there is none, the
/// new topic once one is created under the name). Locks what a publish locks, the table's
/// shard only to look the name up. Not thread-safe: one per publishing thread (copies are
/// independent). Must be destroyed before its Broker. Until its next call after a delete it
/// keeps the deleted topic's messages in memory.
class Publisher {
 public:
  /// As Broker::publish(topic(), ...). Throws UnknownTopic, std::length_error.
  Offset publish(std::string_view payload, const Headers& headers = {}, std::string_view key = {});
  /// As Broker::send(topic(), ...). Throws UnknownTopic, std::length_error.
  Placement send(std::string_view payload, const Headers& headers = {}, std::string_view key = {});
  /// The topic's name.
  [[nodiscard]] const std::string& topic() const { return topic_; }

 private:
  friend class Broker;
  Publisher(BrokerImpl& impl, std::string topic, std::shared_ptr<Topic> found);

  BrokerImpl* impl_;
  std::string topic_;
  std::shared_ptr<Topic> found_;  // null or deleted: look the name up at the next call
};

/// An in-process publish-subscribe broker with at-least-once delivery (see SPEC.md).
/// Safe for concurrent use from any number of threads without external locking.
/// Every call that throws a broker::Error has changed nothing.
/// Memory order: everything a publisher did before publish() returned is visible to every
/// handler or poller that receives that message.
/// Names: a subscription name is a push subscription, a push group member or a pull
/// subscription; where a call reads or moves a position (seek, stats, dead_letters) a
/// push group's name is accepted too (a member's name wins if both exist).
class Broker {
 public:
  /// A broker with the synchronous dispatcher and a SteadyClock.
  Broker();
  /// With options.storage(): opens (or creates) the directory and rebuilds what it holds
  /// (SPEC R20). Throws NotBrokerStorage, StorageLocked, UnsupportedFormat, CorruptLog,
  /// IoError; then nothing on disk has changed.
  explicit Broker(BrokerOptions options);
  /// Stops the dispatcher's threads after their current handler call; drops pending work.
  /// A handler abandoned after handler_timeout keeps running on its own detached thread
  /// until it returns; it must not call this broker once the destructor has returned.
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // ---- topics ----
  /// Creates an empty topic; with options.partitions > 1 also its partitions, each a topic
  /// named partition_name(name, p) (R29). Throws InvalidArgument (empty name, partitions 0
  /// or above kMaxPartitions), DuplicateTopic (the name or a partition's name is in use).
  void create_topic(const std::string& name, TopicOptions options = {});
  /// create_topic unless the topic is already there (R1): true if it made it, false if a
  /// topic of that name with the same options exists (a program that creates its topics at
  /// start runs again on a reopened durable broker). Throws what create_topic throws, and
  /// OptionsMismatch if the name is taken by a topic with other options or by a partition.
  bool create_topic_if_absent(const std::string& name, TopicOptions options = {});
  /// Deletes a topic that has no subscriptions, a partitioned topic with its partitions
  /// (none may have subscriptions). Throws UnknownTopic, WrongKind (a partition: delete its
  /// topic), TopicInUse.
  void delete_topic(const std::string& name);
  /// Topic names in creation order; a partitioned topic is followed by its partitions.
  [[nodiscard]] std::vector<std::string> topics() const;
  /// Appends a message and returns its offset. Never waits for a subscriber; may drop the
  /// oldest messages to keep the retention bound. On a partitioned topic, as send() (the
  /// offset is within the partition send picked). The payload, headers and key are copied
  /// once, into the topic's log; every handler and poll reads that copy. Throws
  /// UnknownTopic, or std::length_error if a field is 4 GiB or longer (nothing appended).
  Offset publish(const std::string& topic, std::string_view payload, const Headers& headers = {},
                 std::string_view key = {});
  /// publish, also telling the partition. A partitioned topic picks it by its partitioner
  /// from a non-empty key, round robin without one (R29). Throws UnknownTopic.
  Placement send(const std::string& topic, std::string_view payload, const Headers& headers = {},
                 std::string_view key = {});
  /// A Publisher for the topic (or partition) called `topic`, for publishing many messages to
  /// it. Throws UnknownTopic.
  [[nodiscard]] Publisher publisher(const std::string& topic);
  /// Appends to the named partition (0 for a topic without partitions), whatever the key.
  /// Throws UnknownTopic, PartitionOutOfRange (nothing appended).
  Offset publish_to(const std::string& topic, std::uint32_t partition, std::string_view payload,
                    const Headers& headers = {}, std::string_view key = {});
  /// How many partitions the topic has (1 for a topic without partitions and for a
  /// partition). Throws UnknownTopic.
  [[nodiscard]] std::uint32_t partitions(const std::string& topic) const;
  /// One past the newest offset (the offset the next publish gets); a partitioned topic's
  /// is the sum of its partitions' (how many messages were ever published to it; R29).
  /// Throws UnknownTopic. Every call below that names a topic throws WrongKind for a
  /// partitioned one (ask a partition, R29), except stats and lag, which total it.
  [[nodiscard]] Offset end_offset(const std::string& topic) const;
  /// The oldest offset still kept. Throws UnknownTopic.
  [[nodiscard]] Offset oldest_offset(const std::string& topic) const;

  // ---- push subscriptions ----
  /// Subscribes a handler by name. Throws UnknownTopic, InvalidArgument, DuplicateSubscription,
  /// OffsetOutOfRange, OptionsMismatch (joining a group with other options).
  void subscribe(const std::string& topic, const std::string& name, Handler handler,
                 PushOptions options = {});
  /// R20: resumes what waiting_for_handler() listed with the options it was saved with, as
  /// subscribe(w.topic, w.name, handler, saved) would (a push group: member joins it, as
  /// subscribe(w.topic, member, handler, saved with group = w.name) would); no filter
  /// predicate (subscribe with one instead). Throws InvalidArgument (no handler; a member for
  /// a push subscription, or none for a group), UnknownTopic, UnknownSubscription (no push
  /// subscription of that name waits for a handler, or no push group of that name), then
  /// what that subscribe throws.
  void resubscribe(const WaitingSubscription& waiting, Handler handler,
                   const std::string& member = {});
  /// Removes a push subscription, a group member or a pull subscription; returns whether it
  /// existed. After it returns no offer starts for it; an offer running on another thread
  /// has finished, unless waiting for it could deadlock (then that offer's handler is
  /// already running and its result is ignored). Safe from inside any handler.
  /// Throws UnknownTopic, WrongKind (a consumer group's partition subscription, R32).
  bool unsubscribe(const std::string& topic, const std::string& name);
  /// Moves the subscription's (or group's) next offset; forgets what it held or had
  /// returned. Throws UnknownTopic, UnknownSubscription, OffsetOutOfRange.
  void seek(const std::string& topic, const std::string& name, Offset offset);
  /// Synchronous dispatcher only: delivers everything pending on this thread; returns the
  /// number of confirmed offers. Throws NotSynchronous, ReentrantDrain.
  std::size_t drain();
  /// Threaded dispatchers: waits until the dispatcher has nothing to do right now: no push
  /// subscription runs an offer or has a message it could be offered now. A subscription
  /// that is backing off after failures or is paused (R26) counts as idle, so "idle" is not
  /// "delivered".
  /// Returns false on timeout. Synchronous dispatcher: answers at once.
  bool wait_idle(Millis timeout);
  /// Waits until every message published so far has been confirmed or dead-lettered by
  /// every push subscription (backing-off and paused ones included) and no offer runs. Pull
  /// subscriptions are not waited for (their workers decide). Returns false on timeout.
  /// Synchronous dispatcher: answers at once (drain() is what delivers there).
  bool wait_delivered(Millis timeout);

  // ---- pull subscriptions ----
  /// Creates a pull subscription, or returns silently if one with equal options exists.
  /// Throws UnknownTopic, InvalidArgument, OptionsMismatch, WrongKind, OffsetOutOfRange.
  void subscribe_pull(const std::string& topic, const std::string& name, PullOptions options);
  /// Hands up to max_messages ready messages to member: returned ones first, in offset
  /// order, then new ones, each held until now + ack_timeout; none beyond the
  /// subscription's max_in_flight held at once (SPEC R22); on an ordered subscription none
  /// whose key is held or has a lower message waiting (R31). Throws InvalidArgument
  /// (max_messages == 0 or empty member), then UnknownTopic, UnknownSubscription, WrongKind
  /// (a push subscription, or a consumer group's partition subscription: poll_group, R32).
  std::vector<Received> poll(const std::string& topic, const std::string& subscription,
                             const std::string& member, std::size_t max_messages, Time now);
  /// poll at the broker clock's time (one time line: every call below that takes `now` has
  /// such an overload, so a program need not read the clock to pass it). Each call that
  /// takes `now` first throws InvalidArgument if it is more than kMaxClockSkew from the
  /// broker's clock, unless that clock is moved by its caller (a ManualClock; R11).
  std::vector<Received> poll(const std::string& topic, const std::string& subscription,
                             const std::string& member, std::size_t max_messages);
  /// Like poll at the clock's time, but waits up to timeout (real time) for a message; returns
  /// as soon as one is ready (published, handed back, or let out by an ack that frees a place
  /// or a key; a retry held back by a back-off is looked for every 10 ms). Same arguments in
  /// the same order, same errors in the same order.
  std::vector<Received> poll_wait(const std::string& topic, const std::string& subscription,
                                  const std::string& member, std::size_t max_messages,
                                  Millis timeout);
  /// Confirms a held message. Taken (true, kAccepted) only from its holder before its
  /// deadline; else nothing changes and the outcome says why (AckOutcome, R11).
  /// Throws UnknownTopic, UnknownSubscription, WrongKind.
  AckResult ack(const Receipt& receipt, Time now);
  /// ack at the clock's time.
  AckResult ack(const Receipt& receipt);
  /// Hands a held message back (a failed delivery): offered again once the subscription's
  /// back-off list says (SPEC R24; at once without one). Same acceptance rule as ack.
  AckResult nack(const Receipt& receipt, Time now);
  /// nack at the clock's time.
  AckResult nack(const Receipt& receipt);
  /// Hands a held message back, to be offered again no sooner than now + delay (R24).
  /// Throws InvalidArgument (delay < 0 or > kMaxDuration) first; then as nack.
  AckResult nack(const Receipt& receipt, Time now, Millis delay);
  /// nack with a delay at the clock's time.
  AckResult nack(const Receipt& receipt, Millis delay);
  /// Gives up on a held message (a poison message): dead-lettered at once with reason
  /// "terminated", whatever its attempts (SPEC R23). Same acceptance rule as ack.
  AckResult term(const Receipt& receipt, Time now);
  /// term at the clock's time.
  AckResult term(const Receipt& receipt);
  /// Sets a held message's deadline to now + extension. Same acceptance rule as ack.
  /// Throws InvalidArgument (extension <= 0) first.
  AckResult extend(const Receipt& receipt, Time now, Millis extension);
  /// extend at the clock's time.
  AckResult extend(const Receipt& receipt, Millis extension);
  /// Returns every held message whose deadline is <= now to the front of its queue, or to
  /// the dead letters when it has had max_deliveries offers. Topics in creation order,
  /// subscriptions in creation order, offsets ascending.
  std::vector<Expired> expire(Time now);
  /// expire at the clock's time.
  std::vector<Expired> expire();

  // ---- consumer groups over partitions (SPEC R32) ----
  /// Adds member to the consumer group `group` on topic (made on first join: a pull
  /// subscription called group on each partition, or on the topic itself if it has none,
  /// adopting any such pull subscription with equal options, e.g. after a restart) and
  /// rebalances it with the group's assignor (R30) as a new generation. Held messages of a
  /// partition revoked from its owner come back (R7 at the clock's time, reason "revoked"). A
  /// member already in the group: nothing changes. Returns the member's generation and partitions.
  /// Throws InvalidArgument (empty group or member, bad pull options), UnknownTopic, WrongKind (a
  /// push subscription of that name on a partition), OptionsMismatch (the group or a
  /// partition's subscription exists with other options; "assignor"), OffsetOutOfRange,
  /// IoError. Only a subscribe_pull of the group's name racing the group's first join can
  /// leave it failing with some partitions subscribed.
  Membership join_group(const std::string& topic, const std::string& group,
                        const std::string& member, const GroupOptions& options = {});
  /// The push form of join_group: the group keeps a push subscription (options.push) on
  /// each partition, and a partition's messages go to its owner's handler (R4-R8 per
  /// partition). A rebalance that moves a partition voids the result of a handler call still
  /// running on it (the message comes back, reason "revoked", and its new owner gets it once
  /// that call returned: at most one call per partition at a time, R15). A member already in
  /// the group keeps its first handler. Throws as join_group, and InvalidArgument (empty
  /// handler, bad push options, options.push.group set), WrongKind (the group is a pull
  /// group, or a pull subscription of its name is on a partition), DuplicateSubscription (a
  /// live push subscription or group of its name is on a partition).
  Membership join_group(const std::string& topic, const std::string& group,
                        const std::string& member, Handler handler,
                        const GroupOptions& options = {});
  /// Removes member and rebalances the rest as a new generation (the group and its
  /// positions stay when the last one leaves). In a push group, once it returns the
  /// member's handler runs no more (unless called from that handler). Returns whether it
  /// was a member. Throws
  /// UnknownTopic, UnknownSubscription (no such group).
  bool leave_group(const std::string& topic, const std::string& group, const std::string& member);
  /// The member's current generation and partitions. Throws UnknownTopic,
  /// UnknownSubscription (no such group or member).
  [[nodiscard]] Membership membership(const std::string& topic, const std::string& group,
                                      const std::string& member) const;
  /// poll over the member's partitions: one message from each in turn, lowest partition
  /// first, up to max_messages, each under R11, R22 and R31 per partition; receipts name the
  /// partition's topic and carry the generation, and ack, nack, term and extend refuse a
  /// receipt unless its member has owned that partition since that generation (fencing).
  /// Throws InvalidArgument (max_messages == 0 or empty member), UnknownTopic,
  /// UnknownSubscription (no such group or member), WrongKind (a push group).
  std::vector<Received> poll_group(const std::string& topic, const std::string& group,
                                   const std::string& member, std::size_t max_messages, Time now);
  /// poll_group at the clock's time.
  std::vector<Received> poll_group(const std::string& topic, const std::string& group,
                                   const std::string& member, std::size_t max_messages);
  /// The group's generation, members, assignment and each partition's owner, end,
  /// committed position and lag (R27). Throws UnknownTopic, UnknownSubscription.
  [[nodiscard]] GroupStats group_stats(const std::string& topic, const std::string& group) const;

  // ---- consumer controls (SPEC R25-R28): each takes a subscription's or a group's name ----
  /// Moves the dead letters whose message the log still keeps back to be offered again, in
  /// offset order before new messages, with their attempts back at 0 (R25); dead letters of
  /// messages retention dropped stay. Returns how many left the dead letters.
  /// Throws UnknownTopic, UnknownSubscription, IoError (durable: then nothing changed).
  std::size_t redrive(const std::string& topic, const std::string& name);
  /// Publishes every dead letter (payload, headers, key) to `to_topic` (the same topic too)
  /// in the order they died, then drops those it published; returns their new offsets
  /// (R25; a partitioned to_topic routes each by its key, R29: offsets within partitions). A crash
  /// in between leaves them both published and dead (at least once). Throws UnknownTopic,
  /// UnknownSubscription, then UnknownTopic for to_topic.
  std::vector<Offset> redrive_to(const std::string& topic, const std::string& name,
                                 const std::string& to_topic);
  /// Drops every dead letter; returns how many (R25). Throws UnknownTopic,
  /// UnknownSubscription.
  std::size_t purge_dead_letters(const std::string& topic, const std::string& name);
  /// Offers nothing more until resume: no push offer starts, poll hands out nothing (R26);
  /// held messages may still be answered and still expire; the backlog keeps growing. Not
  /// saved: a restarted broker starts unpaused. Returns whether the state changed.
  /// Throws UnknownTopic, UnknownSubscription.
  bool pause(const std::string& topic, const std::string& name);
  /// Undoes pause; offers go on in R5's order. Returns whether the state changed.
  bool resume(const std::string& topic, const std::string& name);
  /// Messages not yet confirmed and the age at `now` of the lowest of them (R27); on a
  /// partitioned topic, the partitions' counts summed and the oldest age of any (R29).
  /// Throws UnknownTopic, UnknownSubscription (as stats).
  [[nodiscard]] Lag lag(const std::string& topic, const std::string& name, Time now) const;
  /// lag at the clock's time.
  [[nodiscard]] Lag lag(const std::string& topic, const std::string& name) const;
  /// The lowest kept offset published at or after `time`, or the end offset if none
  /// (Kafka's offsetsForTimes; R28). Reads every kept message's time in the worst case.
  /// Throws InvalidArgument (time after the clock's now), UnknownTopic.
  [[nodiscard]] Offset offset_for_time(const std::string& topic, Time time) const;
  /// seek (R12) to offset_for_time(topic, time); returns that offset (R28). Throws
  /// InvalidArgument (time after the clock's now), UnknownTopic, UnknownSubscription.
  Offset seek_to_time(const std::string& topic, const std::string& name, Time time);

  // ---- observation ----
  /// The push subscriptions and push groups waiting for a handler (R20), ordered by topic
  /// name, then name: after a restart, what to resubscribe (or subscribe again with the
  /// options it was saved with; OptionsMismatch names any that differs). Locks each topic's and
  /// subscription's mutex in turn. Throws IoError (a failed store) only.
  [[nodiscard]] std::vector<WaitingSubscription> waiting_for_handler() const;
  /// Counters of a subscription or group (a group member reports its group); on a
  /// partitioned topic, the sums of `name`'s counters over its partitions, each partition
  /// read under its own lock in turn (paused when every one is; R29). Throws UnknownTopic,
  /// UnknownSubscription (on a partitioned topic: a partition without `name`).
  [[nodiscard]] SubscriptionStats stats(const std::string& topic, const std::string& name) const;
  /// Dead letters in the order they died. Throws UnknownTopic, UnknownSubscription.
  [[nodiscard]] std::vector<DeadLetter> dead_letters(const std::string& topic,
                                                     const std::string& name) const;
  /// Subscription names of a topic in subscription order. Throws UnknownTopic.
  [[nodiscard]] std::vector<std::string> subscriptions(const std::string& topic) const;
  /// The injected clock.
  [[nodiscard]] const Clock& clock() const;
  /// What opening the storage directory found and cut (empty for an in-memory broker).
  [[nodiscard]] const RecoveryReport& recovery() const;
  /// R33: a durable broker whose storage failed (a write, sync, rename or removal threw
  /// IoError) names that first failure here; every other call then throws IoError naming
  /// it, until the broker is destroyed and opened again. nullopt while the storage works
  /// (and for an in-memory broker). Never throws.
  [[nodiscard]] std::optional<std::string> storage_failure() const;

 private:
  std::unique_ptr<BrokerImpl> impl_;
};

}  // namespace broker
