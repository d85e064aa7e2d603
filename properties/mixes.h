// The command mixes of the broker-versus-model state machine. Each is a list of op kinds
// drawn uniformly (a kind listed twice is drawn twice as often); with swarm (state_machine.h)
// a sequence first turns a random subset of the kinds off. The properties run Swarm::kHalf.
#pragma once

#include "state_machine.h"

namespace props {

using namespace oplang;  // NOLINT: op kinds read as lists below

/// Every operation, the observations (subscriptions, topics, end_offset, oldest_offset)
/// included; the kinds that build state listed twice. Uniformly a kind listed once is 1/42 of
/// the steps (2.4%).
inline void every_operation(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<
      CreateTopic, DeleteTopic, Publish, Publish, Subscribe, Subscribe, SubscribePull, Unsubscribe,
      Seek, Drain, Poll, PollWait, Ack, Nack, Term, Extend, Expire, Advance, GetStats,
      GetDeadLetters, WaitIdle, WaitDelivered, Subscriptions, Topics, EndOffset, OldestOffset,
      Redrive, RedriveTo, Purge, Pause, Resume, GetLag, OffsetForTime, SeekToTime, PublishTo,
      Partitions, JoinGroup, JoinGroupPush, LeaveGroup, PollGroup, GetMembership, GetGroupStats>(
      swarm);
}

/// Consumer groups (R30, R32): members joining and leaving partitioned topics under every
/// assignor, polling their partitions, answering with current and stale generations, while
/// messages are published, expire and are sought back; stats of partitions and groups, and
/// the partitioned topic's totals (end offset, a group's stats and lag, R29).
inline void consumer_groups(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, CreateTopic, Publish, Publish, Publish, PublishTo,
                             JoinGroup, JoinGroup, JoinGroup, LeaveGroup, PollGroup, PollGroup,
                             PollGroup, PollGroup, Ack, Ack, Ack, Nack, Term, Extend, Expire,
                             Advance, Seek, SubscribePull, Subscribe, Unsubscribe, GetMembership,
                             GetGroupStats, GetStats, GetLag, GetLag, Advance, EndOffset>(swarm);
}

/// Push consumer groups (R32): members with scripted handlers joining and leaving
/// partitioned topics under every assignor, drains delivering each partition to its owner
/// (failures coming back to whoever owns the partition next), seeks, plain subscriptions of
/// the group's name on a partition, stats and names.
inline void push_consumer_groups(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<
      CreateTopic, CreateTopic, Publish, Publish, Publish, PublishTo, JoinGroupPush, JoinGroupPush,
      JoinGroupPush, LeaveGroup, Drain, Drain, Drain, Seek, Subscribe, SubscribePull, Unsubscribe,
      JoinGroup, PollGroup, GetMembership, GetGroupStats, GetStats, Subscriptions, WaitIdle>(swarm);
}

/// Order per key (R31): workers polling ordered and unordered subscriptions of keyed
/// messages, failing some (nack, term, expiry) so a key's next message must wait, and
/// seeking back.
inline void ordered_workers(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Publish, SubscribePull, Poll,
                             Poll, Poll, Poll, Ack, Ack, Ack, Nack, Term, Expire, Advance, Seek,
                             GetStats>(swarm);
}

/// Partitioned topics (R29): keyed and keyless publishes routed by both partitioners,
/// explicit partitions, subscriptions and workers on partitions, the partitioned topic
/// named where a partition is meant, and deletes of both.
inline void partitioned_topics(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, CreateTopic, DeleteTopic, Publish, Publish, Publish,
                             PublishTo, Partitions, Subscribe, SubscribePull, SubscribePull, Poll,
                             Poll, Ack, Nack, Drain, Drain, Seek, GetStats, Topics, EndOffset,
                             Subscriptions, Unsubscribe>(swarm);
}

/// Consumer controls (R25-R28): dead letters made by failing handlers, nacks, terms and
/// expiries, then redriven (in place and to a topic) or purged; pauses and resumes between
/// drains and polls; lag and seeks by time as the clock moves.
inline void consumer_controls(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Subscribe, Subscribe,
                             SubscribePull, SubscribePull, Poll, Poll, Nack, Nack, Term, Term, Ack,
                             Drain, Drain, Expire, Advance, Advance, Redrive, Redrive, RedriveTo,
                             Purge, Pause, Resume, Resume, GetLag, GetLag, OffsetForTime,
                             SeekToTime, GetStats, GetDeadLetters, WaitIdle, WaitDelivered>(swarm);
}

/// Controls on every option (pairwise coverage, option_pairs.h): few kinds, so a pause, a
/// resume, a redrive or a seek and then a delivery meet subscriptions with every option
/// (filters, bounds, key order, back-off lists, durable attempts, groups, idempotence) on
/// topics with and without retention; half the sequences fix a subset of the options on
/// for every topic and subscription they make (the option swarm, state_machine.h).
inline void controls_on_every_option(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Subscribe, SubscribePull, Poll,
                             Poll, Drain, Drain, Nack, Term, Ack, Pause, Resume, Resume, Redrive,
                             Redrive, Seek, Advance, GetLag>(swarm, /*durable=*/false,
                                                             /*option_swarm=*/true);
}

/// Push delivery: scripted (and idempotent) handlers that fail, throw, unsubscribe, publish
/// and seek from inside, groups, filters, drains, and the waits that say what is left.
inline void push_delivery(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Subscribe, Subscribe,
                             Unsubscribe, Seek, Drain, Drain, Drain, GetStats, GetDeadLetters,
                             WaitIdle, WaitDelivered>(swarm);
}

/// Pull delivery: workers polling (also with poll_wait), acking, nacking, terminating and
/// extending around exact deadlines, some subscriptions bounded by max_in_flight; lag read
/// where returned, held and new messages of different ages wait together (R27).
inline void pull_delivery(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, SubscribePull, SubscribePull,
                             Poll, Poll, PollWait, Ack, Ack, Nack, Term, Extend, Expire, Expire,
                             Advance, Advance, Seek, GetStats, GetDeadLetters, GetLag>(swarm);
}

/// Retention and seek: small logs, subscriptions behind the oldest kept offset, and the
/// log's edges (end_offset, oldest_offset) as retention moves them.
inline void retention_and_seek(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Subscribe, SubscribePull, Seek,
                             Seek, Drain, Poll, Ack, GetStats, WaitDelivered, EndOffset,
                             OldestOffset>(swarm);
}

/// Durability (R19, R20) on a simulated disk under FsyncPolicy::always: every operation
/// with restarts and power cuts between calls, after which the broker must be exactly the
/// model's restarted state (nothing that returned is lost; positions, attempts and dead
/// letters as last saved), and push subscriptions resumed with their saved options; and disk
/// faults (R33): a call that meets one throws IoError and is undecided, every call after it
/// throws IoError, and the reopened broker holds a state the undecided call may have left.
inline void durable_operation(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, DeleteTopic, Publish, Publish, Subscribe, Subscribe,
                             SubscribePull, Unsubscribe, Seek, Drain, Poll, Ack, Nack, Term, Expire,
                             Advance, GetStats, GetDeadLetters, Subscriptions, EndOffset,
                             OldestOffset, Redrive, RedriveTo, Purge, Pause, SeekToTime, PublishTo,
                             Topics, Restart, Crash, Crash, Fault, Fault>(swarm, true);
}

/// Durable delivery: consuming across restarts: pull workers and push handlers, retention
/// over small segments, seeks, and crashes and disk faults (R33) in between.
inline void durable_delivery(Swarm swarm = Swarm::kHalf) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Subscribe, SubscribePull,
                             Drain, Drain, Poll, Poll, Ack, Ack, Nack, Expire, Advance, Seek,
                             Redrive, SeekToTime, GetStats, GetDeadLetters, JoinGroup, PollGroup,
                             JoinGroupPush, LeaveGroup, GetGroupStats, Restart, Crash, Fault>(swarm,
                                                                                              true);
}

}  // namespace props
