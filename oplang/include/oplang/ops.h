// The operation language: one value type per broker call, shared by the model runner, the
// broker runner, the text form, properties and fuzzers.
//
// Time: there is one shared clock starting at 0. `advance` moves it; publish stamps
// messages with it and poll/ack/nack/extend/expire pass it as `now`; poll_wait polls at it
// (its timeout is real time: the shared clock does not move while it waits).
// Push handlers are scripted (oplang/script.h): a Subscribe carries its member's Script.
// Concurrent programs (oplang/program.h) run Scripts in fibers; there `advance` sleeps the
// calling fiber, `yield` is a scheduling point, and ack/nack/extend may name a message by
// the member's hand (`oldest`, `all`) instead of by offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/types.h"
#include "oplang/script.h"

namespace oplang {

using model::Headers;
using model::Millis;
using model::Offset;
using model::Start;

/// create_topic(name, {retention_messages, retention_bytes, partitions, partitioner}), or
/// with if_absent create_topic_if_absent (R1), which answers whether it made the topic.
struct CreateTopic {
  std::string name;
  std::size_t retention_messages = 0;
  std::size_t retention_bytes = 0;
  std::uint32_t partitions = 1;  // R29: > 1 makes name-0.. too
  model::Partitioner partitioner = model::Partitioner::kMurmur2;
  bool if_absent = false;
  bool operator==(const CreateTopic&) const = default;
};
/// delete_topic(name)
struct DeleteTopic {
  std::string name;
  bool operator==(const DeleteTopic&) const = default;
};
/// publish(topic, payload, headers, key); on a partitioned topic send(), whose partition
/// the outcome shows (R29). With `via_publisher`, through a broker::Publisher for topic
/// (Broker::publisher, made at the first such publish and kept across deletes of the topic):
/// the same outcome as by name.
struct Publish {
  std::string topic;
  std::string payload;
  Headers headers;
  std::string key;
  bool via_publisher = false;
  bool operator==(const Publish&) const = default;
};
/// publish_to(topic, partition, payload, headers, key) (R29)
struct PublishTo {
  std::string topic;
  std::uint32_t partition = 0;
  std::string payload;
  Headers headers;
  std::string key;
  bool operator==(const PublishTo&) const = default;
};
/// partitions(topic) (R29)
struct Partitions {
  std::string topic;
  bool operator==(const Partitions&) const = default;
};
/// subscribe(topic, name, handler running `script`, {header_filter, max_deliveries, start, group});
/// with `idempotent` the handler is wrapped in broker::idempotent() (broker/idempotent.h).
/// With `saved`, resubscribe (R20): the options are those saved for the push subscription
/// `name` that waits for a handler, or for the push group `group`, which `name` joins (its
/// filter, max_deliveries, start, backoff and durable_attempts here are ignored).
struct Subscribe {
  std::string topic;
  std::string name;
  Headers filter;
  int max_deliveries = 5;
  Start start;
  std::string group;
  model::Script script;
  bool idempotent = false;
  std::vector<Millis> backoff{};  // R24 (empty: no wait)
  bool durable_attempts = false;  // R34
  bool saved = false;             // R20: resubscribe
  bool operator==(const Subscribe&) const = default;
};
/// subscribe_pull(topic, name, {header_filter, ack_timeout, max_deliveries, start,
/// max_in_flight})
struct SubscribePull {
  std::string topic;
  std::string name;
  Headers filter;
  Millis ack_timeout = 30000;
  int max_deliveries = 5;
  Start start;
  std::size_t max_in_flight = 0;  // R22 (0: no bound)
  std::vector<Millis> backoff{};  // R24 (empty: no wait)
  bool ordered_by_key = false;    // R31
  bool durable_attempts = false;  // R34
  bool operator==(const SubscribePull&) const = default;
};
/// unsubscribe(topic, name)
struct Unsubscribe {
  std::string topic;
  std::string name;
  bool operator==(const Unsubscribe&) const = default;
};
/// seek(topic, name, offset)
struct Seek {
  std::string topic;
  std::string name;
  Offset offset = 0;
  bool operator==(const Seek&) const = default;
};
/// drain()
struct Drain {
  bool operator==(const Drain&) const = default;
};
/// poll(topic, sub, member, now, max)
struct Poll {
  std::string topic;
  std::string sub;
  std::string member;
  std::size_t max = 1;
  bool operator==(const Poll&) const = default;
};
/// Which messages an ack / nack / extend names. kOffset: the one at `offset`. In concurrent
/// programs only (a sequential script names offsets): kOldest, the oldest message in the
/// member's hand, kAll, every message in it, oldest first; the hand is what poll gave the
/// member on that subscription and it has not acked or nacked since, resolved when the op
/// runs (a message may have expired from it meanwhile: then the broker refuses).
enum class Which { kOffset, kOldest, kAll };

/// ack(topic, sub, offset, member, now)
struct Ack {
  std::string topic;
  std::string sub;
  Offset offset = 0;  // kOffset only (0 otherwise)
  std::string member;
  Which which = Which::kOffset;
  std::uint64_t generation = 0;  // R32: the receipt's group generation (0: poll's)
  bool operator==(const Ack&) const = default;
};
/// nack(topic, sub, offset, member, now[, delay])
struct Nack {
  std::string topic;
  std::string sub;
  Offset offset = 0;  // kOffset only (0 otherwise)
  std::string member;
  Which which = Which::kOffset;
  std::optional<Millis> delay = std::nullopt;  // R24 (none: the back-off list's wait)
  std::uint64_t generation = 0;                // R32: the receipt's group generation
  bool operator==(const Nack&) const = default;
};
/// term(topic, sub, offset, member, now): give up on a held message (R23)
struct Term {
  std::string topic;
  std::string sub;
  Offset offset = 0;  // kOffset only (0 otherwise)
  std::string member;
  Which which = Which::kOffset;
  std::uint64_t generation = 0;  // R32: the receipt's group generation (0: poll's)
  bool operator==(const Term&) const = default;
};
/// extend(topic, sub, offset, member, now, extension)
struct Extend {
  std::string topic;
  std::string sub;
  Offset offset = 0;  // kOffset only (0 otherwise)
  std::string member;
  Millis extension = 0;
  Which which = Which::kOffset;
  std::uint64_t generation = 0;  // R32: the receipt's group generation (0: poll's)
  bool operator==(const Extend&) const = default;
};
/// expire(now)
struct Expire {
  bool operator==(const Expire&) const = default;
};
/// Moves the shared clock forward by ms (not a broker call).
struct Advance {
  Millis ms = 0;
  bool operator==(const Advance&) const = default;
};
/// stats(topic, name)
struct GetStats {
  std::string topic;
  std::string name;
  bool operator==(const GetStats&) const = default;
};
/// dead_letters(topic, name)
struct GetDeadLetters {
  std::string topic;
  std::string name;
  bool operator==(const GetDeadLetters&) const = default;
};

/// `count` scheduling points of the calling fiber (concurrent programs); a sequential run
/// does nothing.
struct Yield {
  std::size_t count = 1;
  bool operator==(const Yield&) const = default;
};
/// subscriptions(topic): its subscription and group member names.
struct Subscriptions {
  std::string topic;
  bool operator==(const Subscriptions&) const = default;
};
/// topics(): topic names in creation order; or, with waiting, waiting_for_handler() (R20):
/// the push subscriptions and push groups without a handler.
struct Topics {
  bool waiting = false;
  bool operator==(const Topics&) const = default;
};
/// poll_wait(topic, sub, member, max, timeout): poll at the clock's now, waiting up to
/// `timeout` ms of real time for a message (same argument checks and errors as poll).
struct PollWait {
  std::string topic;
  std::string sub;
  std::string member;
  std::size_t max = 1;
  Millis timeout = 0;
  bool operator==(const PollWait&) const = default;
};
/// wait_idle(timeout): whether the dispatcher has nothing to do right now (R15).
struct WaitIdle {
  Millis timeout = 0;
  bool operator==(const WaitIdle&) const = default;
};
/// wait_delivered(timeout): whether every message published so far is confirmed or
/// dead-lettered by every push subscription (R15).
struct WaitDelivered {
  Millis timeout = 0;
  bool operator==(const WaitDelivered&) const = default;
};
/// end_offset(topic): the offset the next publish will get.
struct EndOffset {
  std::string topic;
  bool operator==(const EndOffset&) const = default;
};
/// oldest_offset(topic): the oldest offset the topic still keeps.
struct OldestOffset {
  std::string topic;
  bool operator==(const OldestOffset&) const = default;
};

/// A clean restart of a durable broker: close it and open it again on its directory
/// (R20). Only runners with storage take it (the broker runner's durable mode).
struct Restart {
  bool operator==(const Restart&) const = default;
};
/// Damage at rest between a power cut and the reopen (R21), in one segment file the seed
/// picks: `truncate` cuts a topic's newest segment at a byte; `corrupt` flips a bit of any
/// segment (every byte of a segment is checksummed, so recovery must notice).
enum class Damage { kNone, kTruncate, kCorrupt };

/// A power cut between two calls: the broker dies, the simulated disk keeps only what was
/// synced (seeded torn tails of the rest), and a broker opens it again. Under
/// FsyncPolicy::always nothing that returned is lost, so the model treats it as restart.
/// With damage, the reopen may cut the damaged topic's log (a torn tail; or `CorruptLog`,
/// then the runner opens it again with repair): the outcome is a CutResult, and the model
/// restarts and loses that tail (Model::lose_tail) if the cut is one R21 allows.
struct Crash {
  std::uint64_t seed = 0;
  Damage damage = Damage::kNone;
  bool operator==(const Crash&) const = default;
};

/// The I/O calls a `fault` counts (SimFileSystem::Call): `open` is an append (or a map)
/// that creates its file, `extend` grows a segment written through a mapping (and a full
/// disk refuses it whole), `sync` is also a mapped segment's.
enum class IoCall { kOpen, kAppend, kSync, kSyncDir, kRename, kRemove, kTruncate, kExtend };
/// What a faulted call fails with.
enum class DiskError { kEio, kEnospc };

/// A disk fault armed between two calls (R33): the `nth` next I/O call of kind `call` the
/// broker makes fails with `error` (a failed sync drops the file's unsynced bytes, a full
/// disk writes half an append). Only runners on the simulated disk take it, and a restart or
/// crash forgets a fault that has not fired. The model does nothing: it cannot know which
/// call of the broker's meets the fault, so an IoError after it is judged by R33 (the call
/// is undecided until a reopen; every call after it throws IoError).
struct Fault {
  IoCall call = IoCall::kSync;
  std::uint32_t nth = 1;
  DiskError error = DiskError::kEio;
  bool operator==(const Fault&) const = default;
};

/// redrive(topic, name): dead letters of kept messages back to be offered (R25).
struct Redrive {
  std::string topic;
  std::string name;
  bool operator==(const Redrive&) const = default;
};
/// redrive_to(topic, name, to): every dead letter published to `to` (R25).
struct RedriveTo {
  std::string topic;
  std::string name;
  std::string to;
  bool operator==(const RedriveTo&) const = default;
};
/// purge_dead_letters(topic, name) (R25).
struct Purge {
  std::string topic;
  std::string name;
  bool operator==(const Purge&) const = default;
};
/// pause(topic, name) (R26).
struct Pause {
  std::string topic;
  std::string name;
  bool operator==(const Pause&) const = default;
};
/// resume(topic, name) (R26).
struct Resume {
  std::string topic;
  std::string name;
  bool operator==(const Resume&) const = default;
};
/// lag(topic, name, now) (R27).
struct GetLag {
  std::string topic;
  std::string name;
  bool operator==(const GetLag&) const = default;
};
/// offset_for_time(topic, time): `time` is a point of the shared clock (R28).
struct OffsetForTime {
  std::string topic;
  Millis time = 0;
  bool operator==(const OffsetForTime&) const = default;
};
/// seek_to_time(topic, name, time) (R28).
struct SeekToTime {
  std::string topic;
  std::string name;
  Millis time = 0;
  bool operator==(const SeekToTime&) const = default;
};

/// join_group(topic, group, member, {assignor, pull options as subscribe_pull's}) (R32)
struct JoinGroup {
  std::string topic;
  std::string group;
  std::string member;
  model::Assignor assignor = model::Assignor::kRange;
  Headers filter;
  Millis ack_timeout = 30000;
  int max_deliveries = 5;
  Start start;
  std::size_t max_in_flight = 0;
  std::vector<Millis> backoff{};
  bool ordered_by_key = false;
  bool durable_attempts = false;  // R34
  bool operator==(const JoinGroup&) const = default;
};
/// join_group(topic, group, member, handler running `script`, {assignor, push options as
/// subscribe's: filter, max_deliveries, start, backoff}) (R32, a push group)
struct JoinGroupPush {
  std::string topic;
  std::string group;
  std::string member;
  model::Assignor assignor = model::Assignor::kRange;
  Headers filter;
  int max_deliveries = 5;
  Start start;
  std::vector<Millis> backoff{};
  model::Script script;
  bool operator==(const JoinGroupPush&) const = default;
};
/// leave_group(topic, group, member) (R32)
struct LeaveGroup {
  std::string topic;
  std::string group;
  std::string member;
  bool operator==(const LeaveGroup&) const = default;
};
/// poll_group(topic, group, member, max, now) (R32)
struct PollGroup {
  std::string topic;
  std::string group;
  std::string member;
  std::size_t max = 1;
  bool operator==(const PollGroup&) const = default;
};
/// membership(topic, group, member) (R32)
struct GetMembership {
  std::string topic;
  std::string group;
  std::string member;
  bool operator==(const GetMembership&) const = default;
};
/// group_stats(topic, group) (R32)
struct GetGroupStats {
  std::string topic;
  std::string group;
  bool operator==(const GetGroupStats&) const = default;
};

/// One operation of a script. (The byte decoder numbers the first 16 kinds in this order and
/// reaches the others, but yield, and idempotent subscribes by escape bytes.)
using Op =
    std::variant<CreateTopic, DeleteTopic, Publish, Subscribe, SubscribePull, Unsubscribe, Seek,
                 Drain, Poll, Ack, Nack, Extend, Expire, Advance, GetStats, GetDeadLetters, Yield,
                 Subscriptions, Topics, PollWait, WaitIdle, WaitDelivered, EndOffset, OldestOffset,
                 Restart, Crash, Term, Redrive, RedriveTo, Purge, Pause, Resume, GetLag,
                 OffsetForTime, SeekToTime, PublishTo, Partitions, JoinGroup, JoinGroupPush,
                 LeaveGroup, PollGroup, GetMembership, GetGroupStats, Fault>;

/// A script: operations run in order against one fresh broker (or model).
using Script = std::vector<Op>;

}  // namespace oplang
