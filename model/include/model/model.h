// The reference model: a sequential, obviously-correct statement of SPEC.md (R1-R14).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/errors.h"
#include "model/handler_script.h"
#include "model/types.h"

namespace model {

/// Options of a push subscription. The model's filter is header-only (no predicate).
struct PushOptions {
  Headers header_filter{};
  int max_deliveries = 5;  // 0 = no limit
  Start start{};
  std::string group{};      // non-empty: join or create this group (R10)
  Script script{};          // what this handler does on each offer
  bool idempotent = false;  // the handler is wrapped in broker::idempotent(): see drain()
  /// R24: after a failed offer of attempt k the message waits backoff[min(k, size) - 1] ms
  /// before it is offered again (empty: no wait).
  std::vector<Millis> backoff{};
  /// R34: each offer's attempt is saved before the handler runs (a durable broker).
  bool durable_attempts = false;
};

/// Options of a pull subscription (R11).
struct PullOptions {
  Headers header_filter{};
  Millis ack_timeout = 30000;
  int max_deliveries = 5;
  Start start{};
  /// R22: at most this many messages held at once, new and redelivered alike (0: no limit).
  std::size_t max_in_flight = 0;
  /// R24: after a failure of attempt k (a nack without a delay, an expiry) the message waits
  /// backoff[min(k, size) - 1] ms before it is offered again (empty: no wait).
  std::vector<Millis> backoff{};
  /// R31: at most one message per key held at once, a key's messages in offset order.
  bool ordered_by_key = false;
  /// R34: poll saves the attempts of what it hands out before it returns (a durable broker).
  bool durable_attempts = false;
  bool operator==(const PullOptions&) const = default;
};

/// The whole broker contract on plain containers, as the synchronous dispatcher keeps it
/// (R15's threaded timing is not modelled). Not thread-safe; one caller at a time.
/// Every public call either succeeds or throws model::Error having changed nothing (R14).
/// Scripted handlers run inside drain() and may call back into the model.
/// Rules an engine may state otherwise: the switches of the conformance kit's engine
/// profiles (SPEC "Conformance"). All off, the default, is SPEC.md.
struct Profile {
  /// R11: an ack, nack or term from the member a message was last given to still settles it
  /// after its deadline passed, until the message is offered again (nack then leaves it
  /// returned).
  bool late_ack_accepted = false;
  /// R5: returned messages are offered in the order they came back (a nack at once, a
  /// delayed nack when its wait ends, an expiry at its deadline; equal times in the order
  /// they were returned, equal deadlines in offset order), not lowest offset first.
  bool redelivery_in_return_order = false;
  /// R7: a pull subscription's message whose last delivery failed comes back like any other
  /// and is dead-lettered when it would be offered again (by that poll), not when it failed.
  /// A push subscription's dies at its failure as without the switch: the engine pushes the
  /// next offer at once, so "offered again" is then.
  bool dead_letter_when_offered_again = false;
  /// R3: a held message retention dropped keeps only its offset (Redis's pending list),
  /// and only until the next poll of its subscription, which forgets it (counted in
  /// `skipped`), as an extend of it does. Until then an ack settles it and a nack or an
  /// expiry returns it (then it is skipped); a dead letter made of it has no payload,
  /// headers or key.
  bool trimmed_held_keeps_only_its_offset = false;
  /// R11: an ack or term from the member that nacked a message still settles it, until the
  /// message is offered again.
  bool ack_after_nack_settles = false;
  /// R11: an ack, nack, term or extend from a member the message was given to before still
  /// applies to it after it was offered to another member (or to the same one again), as
  /// long as it is not settled: an ack settles it, a term dead-letters it, a nack gives it
  /// back, an extend moves the deadline of whoever holds it.
  bool late_ack_by_previous_holder = false;
  /// R11: ack, nack, term and extend answer true to any member the message was ever given
  /// to, whether or not they changed anything.
  bool acks_always_confirmed = false;
  /// R23: every term from a member the message was given to is a dead letter ("terminated",
  /// with the attempt that member was given), also of a message settled or dead already.
  bool term_always_announced = false;
  /// R3: a held or returned message retention drops is terminated at once: a dead letter
  /// ("terminated", with its attempts and body), never offered again.
  bool retention_terminates_held = false;
  /// R12: a seek moves only the subscription's cursor (pull or push): held and returned
  /// messages and their attempts stay; one the cursor reaches again while held or returned
  /// is handed out anew (to the poller, or the next offer, attempt 1).
  bool seek_moves_only_the_cursor = false;
  /// R22: a returned message keeps its place under max_in_flight until it is offered again
  /// (a new message is offered only while held and returned ones together are fewer); being
  /// offered again is never held back by the bound.
  bool retry_wait_holds_a_place = false;
  /// R24: a nack or an extend, by a member a returned message was given to, before it is
  /// offered again sets its wait anew: a nack to its delay from now (none: ready now), an
  /// extend of one still waiting to the extension from now.
  bool answers_reset_a_retry_wait = false;
  /// R27: lag also counts what retention dropped: for good, every message dropped before
  /// the subscription's cursor reached it, once that count runs (from a pull subscription's
  /// creation at the end, its first message taken from the cursor, filtered ones too, or a
  /// seek, which starts it again at 0; before that, kept messages only); and a message
  /// returned while kept and dropped after, until the subscription's next poll (one
  /// returned when already dropped is not: the claim that returns it drops it). (Redis:
  /// XINFO GROUPS's lag is entries added less the group's read counter, which grows by one
  /// a read once it is known; its pending count keeps a trimmed entry until XAUTOCLAIM
  /// drops it.)
  bool lag_counts_trimmed = false;
  /// R11: ack, nack, term and extend answer only whether they took effect, not why (the
  /// op's value is true or false, not an AckOutcome).
  bool answers_name_no_reason = false;
  /// R4: a subscription is given only what is published after it is made: one asked to
  /// start at the beginning starts at the end (a queue bound to an exchange).
  bool starts_at_the_end = false;
  /// R5: a subscription without max deliveries is one queue: a returned message goes behind
  /// every message published before it came back, not ahead of every new one (ahead of later
  /// ones). With max deliveries, returned messages still come first.
  bool returned_to_the_back = false;
};

class Model {
 public:
  explicit Model(Profile profile = {}) : profile_(profile) {}
  /// The engine behaviours this model follows.
  [[nodiscard]] const Profile& profile() const { return profile_; }

  // ---- clock ----
  /// The model's clock: publish stamps messages with it (R2).
  [[nodiscard]] Millis now() const { return now_; }
  /// Moves the clock forward by ms.
  void advance(Millis ms) { now_ += ms; }

  // ---- topics (R1-R3, R29) ----
  /// R1; with partitions > 1, R29: the topic and its partitions "name-p", each a topic.
  void create_topic(const std::string& name, std::size_t retention_messages = 0,
                    std::size_t retention_bytes = 0, std::uint32_t partitions = 1,
                    Partitioner partitioner = Partitioner::kMurmur2);
  /// R1: create_topic unless a topic of that name with the same options exists (false, and
  /// nothing changes); a name taken by a topic with other options or by a partition is
  /// kOptionsMismatch. True if it made the topic.
  bool create_topic_if_absent(const std::string& name, std::size_t retention_messages = 0,
                              std::size_t retention_bytes = 0, std::uint32_t partitions = 1,
                              Partitioner partitioner = Partitioner::kMurmur2);
  void delete_topic(const std::string& name);
  [[nodiscard]] std::vector<std::string> topics() const;
  Offset publish(const std::string& topic, const std::string& payload, const Headers& headers = {},
                 const std::string& key = {});
  /// R29: publish, telling the partition: a partitioned topic routes a keyed message by its
  /// partitioner, a keyless one round robin; any other topic is partition 0.
  Placement send(const std::string& topic, const std::string& payload, const Headers& headers = {},
                 const std::string& key = {});
  /// R29: publish to partition `partition` (0 for a topic without partitions).
  Offset publish_to(const std::string& topic, std::uint32_t partition, const std::string& payload,
                    const Headers& headers = {}, const std::string& key = {});
  /// R29: the partition count (1 for a topic without partitions or a partition).
  [[nodiscard]] std::uint32_t partitions(const std::string& topic) const;
  /// One past the newest offset; R29: a partitioned topic's is the sum of its partitions'
  /// (every message ever published to it).
  [[nodiscard]] Offset end_offset(const std::string& topic) const;
  [[nodiscard]] Offset oldest_offset(const std::string& topic) const;

  // ---- push (R4-R10, R12) ----
  void subscribe(const std::string& topic, const std::string& name, const PushOptions& options);
  /// R20: subscribe with the options saved for the push subscription `name` a restart left
  /// waiting for a handler, or (options.group set) for that push group, which `name` joins;
  /// only the script and idempotent of `options` count. Throws InvalidArgument (empty name),
  /// UnknownTopic, UnknownSubscription (nothing of that name waits, no such push group),
  /// then what subscribe throws.
  void resubscribe(const std::string& topic, const std::string& name, PushOptions options);
  bool unsubscribe(const std::string& topic, const std::string& name);
  void seek(const std::string& topic, const std::string& name, Offset offset);
  /// R8. An idempotent member's offer of an offset its handler already confirmed (returned
  /// true for, in this member's lifetime) is confirmed without running its script: no step
  /// is used and the call records the effect "idempotent -> repeat".
  std::size_t drain();
  /// R15, synchronous: answers at once whether nothing can be offered now: no push
  /// subscription that is not paused (R26) has a redelivery whose wait is over (R24), a held
  /// message or a matching message at its cursor (after the catch-up, R3). (R15's own
  /// back-off needs threads.)
  bool wait_idle(Millis timeout);
  /// R15, synchronous: answers at once whether every message published so far is confirmed
  /// or dead-lettered (or filtered out or skipped) by every push subscription; pull
  /// subscriptions are not considered. The timeout changes nothing: only drain() delivers.
  bool wait_delivered(Millis timeout);

  // ---- pull (R11) ----
  void subscribe_pull(const std::string& topic, const std::string& name,
                      const PullOptions& options);
  std::vector<Received> poll(const std::string& topic, const std::string& sub,
                             const std::string& member, Millis now, std::size_t max);
  /// R11, R14: poll at the model's clock, with poll's checks in poll's order. Nothing can
  /// arrive while a sequential model waits, so an empty poll stays empty after the timeout.
  std::vector<Received> poll_wait(const std::string& topic, const std::string& sub,
                                  const std::string& member, std::size_t max, Millis timeout);
  /// R11; R32: on a consumer group's partition only a receipt whose generation its member
  /// has owned the partition through is accepted (so for nack, extend, term). A refusal
  /// changes nothing and names its AckOutcome.
  AckResult ack(const std::string& topic, const std::string& sub, Offset offset,
                const std::string& member, Millis now, std::uint64_t generation = 0);
  /// R11, R24: the message waits `delay` ms before it is offered again (none: what the
  /// back-off list says). A delay < 0 or > kMaxDuration is InvalidArgument.
  AckResult nack(const std::string& topic, const std::string& sub, Offset offset,
                 const std::string& member, Millis now, std::optional<Millis> delay = std::nullopt,
                 std::uint64_t generation = 0);
  AckResult extend(const std::string& topic, const std::string& sub, Offset offset,
                   const std::string& member, Millis now, Millis extension,
                   std::uint64_t generation = 0);
  /// R23: an accepted term dead-letters the held message at once (reason "terminated").
  AckResult term(const std::string& topic, const std::string& sub, Offset offset,
                 const std::string& member, Millis now, std::uint64_t generation = 0);
  /// R11, R7: fails every held pull message whose deadline is <= now, and saves each pull
  /// subscription in turn (topics and subscriptions in creation order). R33, R19: a failed
  /// commit or a power cut may stop it after the first `subscriptions` of them.
  std::vector<Expired> expire(Millis now, std::size_t subscriptions = SIZE_MAX);

  // ---- consumer groups over partitions (R32) ----
  /// R32: member joins the consumer group (made on the first join: a pull subscription
  /// called group with `options` on each partition, or on the topic itself if it has none;
  /// one that exists with equal options is adopted); a new member makes a rebalance (R30)
  /// and a new generation. Returns the member's generation and partitions.
  Membership join_group(const std::string& topic, const std::string& group,
                        const std::string& member, Assignor assignor, const PullOptions& options);
  /// R32, push: as join_group, with a push subscription (options; group empty) on each
  /// partition whose one member is the partition's owner, running the owner's script (a
  /// member keeps its first script; one a restart left dormant with equal options is
  /// adopted).
  Membership join_group_push(const std::string& topic, const std::string& group,
                             const std::string& member, Assignor assignor,
                             const PushOptions& options);
  /// R32: member leaves (a rebalance of the rest); false if it was not a member.
  bool leave_group(const std::string& topic, const std::string& group, const std::string& member);
  /// R32: the member's generation and partitions.
  [[nodiscard]] Membership membership(const std::string& topic, const std::string& group,
                                      const std::string& member) const;
  /// R32: poll over the member's partitions, one message from each in turn (lowest
  /// partition first) up to max; each received names its partition's topic and generation.
  std::vector<Received> poll_group(const std::string& topic, const std::string& group,
                                   const std::string& member, Millis now, std::size_t max);
  /// R32: the group's generation, members, assignment and partitions.
  GroupStats group_stats(const std::string& topic, const std::string& group);

  // ---- consumer controls (R25-R28); each also takes a push group's name ----
  /// R25: every dead letter whose message the log still keeps leaves the dead letters and,
  /// unless it is already waiting or held, is returned with its attempts back at 0.
  /// Returns how many left.
  std::size_t redrive(const std::string& topic, const std::string& name);
  /// R25: publishes every dead letter (payload, headers, key) to `to_topic` in the order
  /// they died and drops them; returns the new offsets.
  std::vector<Offset> redrive_to(const std::string& topic, const std::string& name,
                                 const std::string& to_topic);
  /// R25: drops every dead letter; returns how many.
  std::size_t purge_dead_letters(const std::string& topic, const std::string& name);
  /// R26: nothing is offered while paused; returns whether this call changed the state.
  bool pause(const std::string& topic, const std::string& name);
  /// R26: offers go on in R5's order; returns whether this call changed the state.
  bool resume(const std::string& topic, const std::string& name);
  /// R27: messages not yet confirmed and the age of the lowest of them at `now`. R29: on a
  /// partitioned topic, the sum of the partitions' counts and the oldest age of any.
  Lag lag(const std::string& topic, const std::string& name, Millis now);
  /// R28: the first kept offset published at or after `time` (the end if none).
  /// A time after now() is InvalidArgument.
  Offset offset_for_time(const std::string& topic, Millis time) const;
  /// R28: seek (R12) to offset_for_time(topic, time); returns that offset.
  Offset seek_to_time(const std::string& topic, const std::string& name, Millis time);

  // ---- observation (R13); seek, stats and dead_letters also take a group's name ----
  /// R13. R29: on a partitioned topic, the totals of `name` on every partition (paused when
  /// every one is).
  Stats stats(const std::string& topic, const std::string& name);
  std::vector<DeadLetter> dead_letters(const std::string& topic, const std::string& name);
  [[nodiscard]] std::vector<std::string> subscriptions(const std::string& topic) const;

  // ---- for generators (not part of the broker's API) ----
  /// One held message of a pull subscription, as generators aim acks at it.
  struct HeldView {
    Offset offset = 0;
    std::string member;
    Millis deadline = 0;
  };
  /// Messages held on a pull subscription; empty if the topic or subscription is unknown.
  [[nodiscard]] std::vector<HeldView> held(const std::string& topic, const std::string& sub) const;
  /// When each returned message of a pull subscription may be offered again (R24's waits;
  /// a message with no wait is left out); empty if the topic or subscription is unknown.
  [[nodiscard]] std::vector<Millis> retry_waits(const std::string& topic,
                                                const std::string& sub) const;
  /// Whether a pull subscription has a message waiting to be offered (returned, passed over
  /// or after its cursor; filters and waits not considered); false if either is unknown.
  [[nodiscard]] bool has_waiting(const std::string& topic, const std::string& sub) const;
  /// Names of the pull subscriptions of a topic; empty if the topic is unknown.
  [[nodiscard]] std::vector<std::string> pull_names(const std::string& topic) const;
  /// Names of the push groups of a topic; empty if the topic is unknown.
  [[nodiscard]] std::vector<std::string> group_names(const std::string& topic) const;
  /// Names (a pull subscription's, a push subscription's or a group's) of the states of a
  /// topic that have dead letters; empty if the topic is unknown.
  [[nodiscard]] std::vector<std::string> dead_letter_names(const std::string& topic) const;
  /// One consumer group (R32), as generators aim join, leave, poll_group and answers at it.
  struct GroupView {
    std::string topic;
    std::string name;
    Assignor assignor = Assignor::kRange;
    PullOptions options;
    std::vector<std::string> members;
    std::uint64_t generation = 0;
    bool push = false;               // members have scripted handlers
    PushOptions push_options;        // a push group's (script empty)
    std::vector<std::string> parts;  // the topics of its partitions, by partition
    /// Per partition: its owner ("" none) and the generation it has owned it since.
    std::vector<std::pair<std::string, std::uint64_t>> owners;
  };
  /// Every consumer group, topics in creation order.
  [[nodiscard]] std::vector<GroupView> consumer_groups() const;
  /// Push subscriptions and groups of a topic back from a restart without a handler (R20).
  [[nodiscard]] std::vector<std::string> dormant_names(const std::string& topic) const;
  /// R20: the push subscriptions and push groups that have no handler (no member, and no
  /// consumer group keeping them, R32: a restart brought them back and nothing resumed
  /// them), each "topic/name" (a push group's "topic/name group"), by topic, then name.
  [[nodiscard]] std::vector<std::string> waiting_for_handler() const;

  // ---- durability (R19, R20): a durable broker under FsyncPolicy::always ----
  /// R20: what a broker reopened on its directory holds (a clean restart, or a crash under
  /// `always`, which loses nothing that returned). Topics and logs stay; every subscription
  /// goes back to its last save (position, attempts, dead letters) with nothing held or
  /// returned, not paused (R26) and its counters at zero; push subscriptions and groups stay
  /// without handlers until subscribe resumes them (R20); handler calls in flight are gone.
  void restart();
  /// R20, R21: a reopen whose recovery cut `topic`'s log at `end` (damage at rest: a torn
  /// tail, or a corrupt record and all after it under repair). Call after restart(). The
  /// messages at and after `end` are gone and the log continues at `end`; a subscription
  /// saved past it is saved at it, and the attempts and dead letters of the lost offsets
  /// are forgotten (a message published there later is a new one). Retention, applied
  /// again to the shorter log, may keep older messages it had dropped that their segments
  /// still hold: those from `oldest` (what the reopened log's oldest_offset says) are back.
  /// Nothing changes if `end` is not below the log's end. Throws Error(kUnknownTopic).
  void lose_tail(const std::string& topic, Offset end, Offset oldest);
  /// R33: the storage of a durable broker failed (a write or sync threw IoError) in a call
  /// whose effect the next restart() decides. From now until restart(), every call of the
  /// broker throws IoError and changes nothing (check_storage).
  void fail_storage() { storage_failed_ = true; }
  [[nodiscard]] bool storage_failed() const { return storage_failed_; }
  /// R33: throws Error(kIoError) if the storage has failed; every call of the broker's
  /// begins with it (the runner asks before each op).
  void check_storage() const;
  /// drain() that stops after `offers` offers (each with its save): what a power cut during
  /// a drain can leave, since every offer's commit is its own record (R19).
  /// With last_unanswered, the last of those offers runs its handler (and its effects) but
  /// its result is not applied: the cut (or a failed commit, R33) came between the two.
  /// With last_effect_undone too, its handler's effect did not take place either: the cut,
  /// or the failed write of that effect's own call (R33: undecided), came during it.
  std::size_t drain_offers(std::size_t offers, bool last_unanswered = false,
                           bool last_effect_undone = false);
  /// R25: what redrive_to leaves when a power cut or a failed write (R33) stops it after
  /// `published` of its publishes: those messages are in `to_topic`, and every dead letter
  /// is still dead (they are dropped in one commit after the last publish), so a redrive
  /// repeated after the reopen publishes them again (at least once, never lost).
  void redrive_to_interrupted(const std::string& topic, const std::string& name,
                              const std::string& to_topic, std::size_t published);

  /// Handler calls made since the last take_calls(), in order; clears them.
  std::vector<HandlerCall> take_calls();

 private:
  // A message handed out and not yet answered; keeps its message alive (R3).
  struct Held {
    std::string member;
    Millis deadline = 0;  // pull only
    int attempt = 0;
    Message message;
    std::uint64_t order = 0;  // Sub::events when offered
  };
  // One subscription state: a push subscription, a push group, or a pull subscription.
  struct Sub {
    std::uint64_t id = 0;
    std::string name;  // the subscription's name; a push group's is the group's (R7)
    bool pull = false;
    Headers filter;
    int max_deliveries = 5;
    Start start;
    Millis ack_timeout = 0;            // pull only
    std::size_t max_in_flight = 0;     // pull only (R22)
    std::vector<Millis> backoff;       // R24
    bool ordered_by_key = false;       // pull only (R31)
    bool durable_attempts = false;     // R34
    std::string group;                 // push group name, "" for a single subscription
    std::vector<std::string> members;  // push: member names in join order
    std::string last_member;           // push: who got the previous offer (R10)
    std::uint64_t seeks = 0;           // bumped by seek; an offer's result needs it unchanged (R9)
    Offset cursor = 0;
    std::set<Offset> redelivery;
    // Who a returned message was last given to, and when it came back (the profile's
    // switches read it; entries outside `redelivery` mean nothing).
    /// A message returned without a failure (a redrive, a key passed over) is ready
    /// whatever the clock says, even one set back before its start (R28).
    static constexpr Millis kNoWait = std::numeric_limits<Millis>::min();
    struct Returned {
      std::string member;
      std::uint64_t order = 0;
      bool by_expiry = false;       // its deadline passed (not a nack)
      Millis not_before = kNoWait;  // R24: not offered again before this time
      // When it came back in an engine's own time (the deadline that passed, the end of
      // its wait): what redelivery_in_return_order orders by.
      Millis due = 0;
      // Retention had dropped its message when it came back (lag_counts_trimmed: the claim
      // that returned it dropped it from the engine's pending list).
      bool gone = false;
      // The topic's end when it came back: returned_to_the_back offers the messages below
      // it first.
      Offset behind = 0;
    };
    std::map<Offset, Returned> returned;
    std::uint64_t events = 0;  // offers and returns, counted (the order they happened in)
    std::map<Offset, Held> in_flight;
    std::map<Offset, int> attempts;
    // Every member a message was handed to, with the attempt it was last given; and the
    // message (the profile's switches on answers by a member that no longer holds it read it).
    struct Given {
      std::map<std::string, int> attempt_of;
      Message message;
    };
    std::map<Offset, Given> given;
    std::vector<DeadLetter> dead;
    bool paused = false;  // R26 (not saved: a restart resumes it)
    // Profile lag_counts_trimmed: whether its count runs, what it counted, and the returned
    // messages retention dropped since the last poll.
    bool counts_trimmed = false;
    std::uint64_t trimmed_unread = 0;
    std::uint64_t trimmed_returned = 0;
    Stats counters;  // committed, cursor, backlog and in_flight are filled in by stats()
    // R19: what the last commit saved (a durable broker writes one when the committed
    // position moves or a message dies, at the end of poll, ack, nack, expire, each push
    // offer, and seek, which always saves).
    struct Saved {
      Offset position = 0;
      std::map<Offset, int> attempts;
      std::vector<DeadLetter> dead;
    };
    Saved saved;
    // R32: a consumer group's partition: who owns it, since which generation, and the
    // group's generation now.
    struct Owner {
      std::string member;
      std::uint64_t since = 0;
      std::uint64_t generation = 0;
    };
    std::optional<Owner> owner;
  };
  // A push member: its own name, its state and its script position; if idempotent, the
  // offsets its script confirmed (what broker::idempotent() remembers for this handler).
  struct Member {
    std::uint64_t sub_id = 0;
    Script script;
    std::size_t next_step = 0;
    bool idempotent = false;
    std::set<Offset> applied;
  };
  // R32: a consumer group over a topic's partitions (not saved: members join again).
  struct Group {
    Assignor assignor = Assignor::kRange;
    PullOptions options;
    std::vector<std::string> members;  // join order
    std::uint64_t generation = 0;
    std::map<std::string, std::vector<std::uint32_t>> assignment;
    bool push = false;  // members have handlers; the partitions' states are push ones
    PushOptions push_options;
    std::map<std::string, Member> handlers;  // push: each member's script and its position
  };
  struct Topic {
    std::uint64_t id = 0;
    std::string name;
    std::size_t retention_messages = 0;
    std::size_t retention_bytes = 0;
    std::map<Offset, Message> log;  // kept messages only
    // Messages retention dropped (R3): a recovery that cuts the log's tail applies
    // retention again to what its segments still hold, and may find some (lose_tail).
    std::map<Offset, Message> dropped;
    Offset end = 0;
    std::vector<std::uint64_t> order;                      // subscription states in creation order
    std::map<std::uint64_t, Sub> subs;                     // by state id
    std::map<std::string, Member> members;                 // push names
    std::map<std::string, std::uint64_t> pulls;            // pull names
    std::map<std::string, std::uint64_t> groups;           // group name -> state id
    std::map<std::string, std::uint64_t> dormant;          // push names back from a restart (R20)
    std::map<std::string, std::uint64_t> consumer_pushes;  // R32: push group name -> its state
    // R29: a partitioned topic holds no log and no subscriptions, only these.
    std::uint32_t partitions = 1;
    Partitioner partitioner = Partitioner::kMurmur2;
    std::uint64_t round_robin = 0;                 // keyless publishes sent so far
    std::string parent;                            // a partition's partitioned topic ("" if none)
    std::map<std::string, Group> consumer_groups;  // R32
  };

  // lookups: topic_or_throw is a topic that holds a log (WrongKind for a partitioned one,
  // R29); any_topic_or_throw may be partitioned.
  Topic& topic_or_throw(const std::string& name);
  const Topic& topic_or_throw(const std::string& name) const;
  Topic& any_topic_or_throw(const std::string& name);
  const Topic& any_topic_or_throw(const std::string& name) const;
  static std::uint32_t partition_of(const Topic& t, const std::string& key);
  // R29: the name of partition p of the partitioned topic called name.
  static std::string partition_name(const std::string& name, std::uint32_t p);
  // R32: the topics a group on t consumes: its partitions, or t itself.
  std::vector<Topic*> group_parts(const Topic& t);
  const Group& group_or_throw(const Topic& t, const std::string& group) const;
  // R32: the state a consumer group keeps on its partition part (pull or push).
  Membership add_member(Topic& t, const std::string& group, const std::string& member,
                        const Script& script);
  static Sub& group_sub(Topic& part, const std::string& group);
  static const Sub& group_sub(const Topic& part, const std::string& group);
  // R32: the scripted handler of a push group's partition state's member.
  Member& group_member(Topic& part, const Sub& s, const std::string& member);
  void rebalance(Topic& t, const std::string& group, std::vector<std::string> members);
  static bool fenced(const Sub& s, const std::string& member, std::uint64_t generation);
  static bool valid(const PullOptions& options);
  Topic* find_topic(const std::string& name);
  Topic* find_topic(std::uint64_t id);
  static Sub* find_sub(Topic& t, const std::string& name);
  static Sub& pull_or_throw(Topic& t, const std::string& name);
  static Sub& position_or_throw(Topic& t, const std::string& name);

  // the rules, one small function each
  static void apply_retention(Topic& t);
  static Offset oldest(const Topic& t);
  static void validate_start(const Topic& t, const Start& start);
  static Offset start_cursor(const Topic& t, const Start& start);
  static bool matches(const Headers& filter, const Message& m);
  void catch_up(const Topic& t, Sub& s) const;
  static void forget_held(Sub& s, Offset offset);
  std::optional<Offset> next_message(const Topic& t, Sub& s, Millis now) const;
  int offer(const Topic& t, Sub& s, Offset offset, const std::string& member,
            Millis deadline) const;
  static void confirm(Sub& s, Offset offset);
  bool fail(const Topic& t, Sub& s, Offset offset, const std::string& reason, Millis now,
            bool terminal = false, std::optional<Millis> delay = std::nullopt) const;
  static Offset committed(const Sub& s);
  static std::string next_member(Sub& s);
  bool accepted(const Sub& s, Offset offset, const std::string& member, Millis now) const;
  bool settles_late(const Sub& s, Offset offset, const std::string& member, bool nack) const;
  bool previous_holder(const Sub& s, Offset offset, const std::string& member) const;
  bool resets_wait(const Sub& s, Offset offset, const std::string& member) const;
  static bool was_given(const Sub& s, Offset offset, const std::string& member);
  bool confirmed_anyway(const Sub& s, Offset offset, const std::string& member) const;
  AckResult refused(const Sub& s, Offset offset, const std::string& member) const;
  static void settle_returned(Sub& s, Offset offset);
  static void announce_term(const Topic& t, Sub& s, Offset offset, const std::string& member,
                            Millis now);
  void terminate_dropped(Topic& t, Millis now) const;
  static void remove_state_if_empty(Topic& t, std::uint64_t id);
  std::uint64_t new_push_state(Topic& t, const std::string& name, const PushOptions& options);
  static bool same_options(const Sub& s, const PushOptions& options);
  static bool valid_backoff(const std::vector<Millis>& backoff);
  static void save(Sub& s, bool force = false);
  void move_cursor(Sub& s, Offset offset) const;
  static std::optional<Offset> lowest_waiting(const Topic& t, const Sub& s);
  static bool key_blocked(const Topic& t, const Sub& s, Offset offset);
  // Whether a message below `end` that s's cursor has not reached passes its filter.
  static bool new_before(const Topic& t, const Sub& s, Offset end);

  // drain pieces
  std::size_t serve(std::uint64_t topic_id, std::uint64_t sub_id);
  bool all_done(bool idle);
  std::string run_effect(const Step& step, const std::string& topic, const std::string& self);

  Profile profile_;
  std::vector<Topic> topics_;  // creation order
  std::uint64_t next_id_ = 1;
  Millis now_ = 0;
  int handler_depth_ = 0;
  std::size_t offer_budget_ = SIZE_MAX;  // drain_offers only
  bool last_unanswered_ = false;         // drain_offers only
  bool last_effect_undone_ = false;      // drain_offers only
  std::vector<HandlerCall> calls_;
  bool storage_failed_ = false;  // R33, until restart()
};

}  // namespace model
