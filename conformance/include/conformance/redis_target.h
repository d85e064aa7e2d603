// The Redis Streams target: the common subset of the operation language run against a real
// redis-server through hiredis.
//
// A topic is a stream `<prefix>:<name>`; an entry carries the payload (field "p") and each
// header (field "h:<key>"). A pull subscription is a consumer group on it (XGROUP CREATE
// ... MKSTREAM, id 0 to start at the beginning, $ at the end); a member is a consumer name.
// Redis keeps no deadline of its own: a message's deadline is its idle time in the group's
// pending list reaching the ack timeout (real ms), and what passed it is claimed back with
// XAUTOCLAIM (min-idle = the ack timeout). The adapter's Lua scripts run each call as one
// atomic step on the server:
//   poll   dead-letters what passed its deadline with no deliveries left, XAUTOCLAIMs what
//          passed its deadline (or was nacked) to the member, then XREADGROUP `>` for new
//          entries (at most 100000 a poll); entries that do not match the header filter
//          are XACKed at once;
//   ack    XACK, nack and term: only if XPENDING names the member as the consumer and the
//          idle time is under the ack timeout (the adapter's check: XACK itself takes any
//          consumer's ack, at any time);
//   nack   XCLAIM to the same consumer with a huge IDLE and JUSTID (the delivery count stays):
//          the next XAUTOCLAIM takes it back at once; at max deliveries, dead-lettered;
//   term   dead-lettered;
//   expire what passed its deadline is returned (as a nack) or, at max deliveries,
//          dead-lettered;
// and a dead letter is XACK + XADD to `<prefix>:<name>:dlq:<sub>` with its stream id,
// attempts (XPENDING's delivery count), reason and model time, in the same script.
// Retention by messages (create_topic with retention_messages = N): every XADD says
// `MAXLEN = N`, an exact trim. Trimming leaves the pending list alone, so a held entry
// trimmed away keeps only its id there: XACK still settles it, but XCLAIM drops it, and so
// does the next poll's XAUTOCLAIM (Redis 7.0 drops a pending entry whose body is gone before
// it looks at the idle time), and its dead letter has no payload or headers (the profile's
// trimmed_held_keeps_only_its_offset).
// A seek is XGROUP SETID to the id before the offset: the group keeps its pending list (the
// profile's seek_moves_only_the_cursor); a seek by time is the same before the first entry
// whose id (the server's clock, in ms) is at or after the model time's wall-clock instant.
// Offsets: the model's 0, 1, 2 per topic are mapped from the stream ids XADD returned.
// A push subscription (R8) is the adapter's: a consumer group like a pull one, whose ack
// timeout never passes in a run; drain walks topics, then their push subscriptions, in
// creation order, and for each runs the poll script for one entry (consumer = the
// subscription's name) until the server has none or the handler script fails, answering
// each through the settle script (ack; a failure nacks, dead-lettered at max deliveries with
// the handler's reason; a terminate is term). Redis has no push: the loop is the adapter's,
// what each read returns is the engine's.
// Header filters are applied by the poll script. A call that finds the connection lost (a
// server restarted) connects again first, within a bound; the call that lost it failed. The model's
// clock is kept here as the JetStream target keeps it: one model ms is `unit_ms` real ms, and
// `advance` sleeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "conformance/target.h"
#include "model/types.h"

struct redisContext;  // hiredis' connection (hiredis/hiredis.h), kept out of this header.

namespace conformance {

/// Not thread-safe (one step at a time); workers() each have their own connection and may
/// step at once.
class RedisTarget : public Target {
 public:
  /// Connects to `url` ("redis://HOST:PORT", or "redis-sentinel://HOST:PORT,.../NAME":
  /// the primary the sentinels name, asked again at every reconnect and after a READONLY
  /// answer; throws TargetFailure if it cannot, and std::invalid_argument for another form).
  /// `prefix` keeps the keys of several targets on one server apart; `unit_ms` is how many real ms
  /// one model ms lasts.
  RedisTarget(const std::string& url, std::string prefix, model::Millis unit_ms);
  /// Deletes every key this target made (a worker: none) and closes the connection.
  ~RedisTarget() override;
  RedisTarget(const RedisTarget&) = delete;
  RedisTarget& operator=(const RedisTarget&) = delete;

  [[nodiscard]] std::string name() const override { return "redis"; }
  /// The common subset, topics that keep their newest N messages (MAXLEN), seek (XGROUP
  /// SETID) and seek by time (SETID before the first id at or after the time's millisecond),
  /// lag (R27: XINFO GROUPS), and push subscriptions with the drain that serves them (R8:
  /// push_without_effects, the drain loop the adapter's).
  [[nodiscard]] bool serves(const oplang::Op& op) const override;
  /// True: Redis streams have no filter; the adapter's poll acks what the filter skips.
  [[nodiscard]] bool filter_is_the_adapters() const override { return true; }
  /// Throws std::invalid_argument outside serves() (a worker: outside poll, ack, nack),
  /// TargetFailure if the server failed or answered what Redis never answers.
  oplang::Outcome step(const oplang::Op& op) override;

  /// The model clock (model ms since the start).
  [[nodiscard]] model::Millis now() const { return now_; }
  /// Model ms the real clock has run ahead of now() since the target was made, or a PING's
  /// round trip now if that is more (the engine's own lag).
  [[nodiscard]] model::Millis lag() const override;
  /// Its own connection to the same server, the same consumer groups (Redis hands each
  /// entry to one consumer of a group). Throws TargetFailure.
  std::unique_ptr<Target> worker() override;

 private:
  struct WorkerOf {
    const RedisTarget& parent;
  };
  explicit RedisTarget(WorkerOf of);
  void connect();
  // Before each call: a connection the server dropped is made again (bounded, see
  // redis_target.cpp). Throws TargetFailure if the server does not come back in time.
  void reconnect_if_lost();
  struct Options {
    model::Headers filter;
    model::Millis ack_timeout = 0;
    int max_deliveries = 0;
    model::Start start;
    bool operator==(const Options&) const = default;
  };
  struct Sub {
    std::string group;
    std::string dlq;  // the dead-letter stream's key
    Options options;
    bool push = false;     // a push subscription (R8): served by drain, not polled
    model::Script script;  // push: the handler's answers, one per offer, then confirm
    std::size_t next_step = 0;
  };
  struct Topic {
    std::string key;
    std::size_t maxlen = 0;                                  // 0: no trim
    std::vector<std::string> ids;                            // offset -> stream id
    std::unordered_map<std::string, model::Offset> offsets;  // stream id -> offset
    std::map<std::string, Sub> subs;
    std::vector<std::string> sub_order;  // subscribe order, as expire walks them
  };

  oplang::Value create_topic(const oplang::CreateTopic& op);
  oplang::Value delete_topic(const oplang::DeleteTopic& op);
  oplang::Value publish(const oplang::Publish& op);
  oplang::Value subscribe_pull(const oplang::SubscribePull& op);
  // R8: a consumer group for a push subscription (none on a bounded topic: std::invalid_argument).
  oplang::Value subscribe(const oplang::Subscribe& op);
  // Makes sub's consumer group on the topic (and clears its dead-letter stream) and records
  // it under name.
  void make_group(Topic& topic, const std::string& name, Sub sub);
  // R8: every push subscription served in creation order (topics first); the offers go to
  // `calls`; returns the count of confirmations.
  oplang::Value drain(std::vector<model::HandlerCall>& calls);
  // The poll script's answer for member: at most max entries.
  std::vector<model::Received> poll_script(Topic& topic, const Sub& sub, const std::string& member,
                                           std::size_t max);
  oplang::Value unsubscribe(const oplang::Unsubscribe& op);
  // R12: XGROUP SETID to the id before the offset (the server keeps the pending list:
  // seek_moves_only_the_cursor); OffsetOutOfRange outside [the first entry's offset, end]
  // (the range check is the adapter's: SETID takes any id).
  oplang::Value seek(const oplang::Seek& op);
  // R28: SETID before the first entry whose id is at or after the model time's wall-clock
  // millisecond (XRANGE: the engine's answer, returned as the offset); InvalidArgument for a
  // time after now (the adapter's check, as the model's).
  oplang::Value seek_to_time(const oplang::SeekToTime& op);
  // XGROUP SETID to the id before offset ("0" before the first).
  void set_cursor(const Topic& topic, const Sub& sub, model::Offset offset);
  oplang::Value poll(const oplang::Poll& op);
  // ack, nack, term or extend of offset by member: the settle script's answer. Throws Error
  // (unknown topic or subscription), TargetFailure.
  bool settle(const std::string& topic, const std::string& sub, model::Offset offset,
              const std::string& member, const char* action);
  // The settle script on sub (a nack at max deliveries dead-lettered with `reason`).
  bool settle_script(const Topic& topic, const Sub& sub, model::Offset offset,
                     const std::string& member, const char* action,
                     const std::string& reason = "nacked");
  // WrongKind for a push subscription (poll, ack, nack, term, extend are the pull's).
  static void pull_only(const Sub& sub);
  // extend by the ack timeout (std::invalid_argument for another extension).
  oplang::Value extend(const oplang::Extend& op);
  oplang::Value advance(const oplang::Advance& op);
  oplang::Value expire();
  oplang::Value dead_letters(const oplang::GetDeadLetters& op);
  // R27: XINFO GROUPS's pending plus lag for the group (lag_counts_trimmed); no age
  // (lag_age_unknown). TargetFailure if the server knows no lag.
  oplang::Value get_lag(const oplang::GetLag& op);

  Topic& topic_or_throw(const std::string& name);
  Sub& sub_or_throw(Topic& topic, const std::string& name);
  // The ack timeout in real ms, as Redis' idle times count.
  [[nodiscard]] long long timeout_ms(const Sub& sub) const;
  model::Offset offset_of(const Topic& topic, const std::string& id) const;
  // The offset of an entry poll hands out; one this target never saw published (a publish
  // whose reply was lost to a crash, yet stored) gets the next offset when first seen.
  model::Offset offset_or_adopt(Topic& topic, const std::string& id);

  std::string host_;  // the server, or (with sentinels) the primary they named last
  int port_ = 0;
  // redis-sentinel:// URLs: the sentinels, asked in order, and the primary's name.
  std::vector<std::pair<std::string, int>> sentinels_;
  std::string master_;
  std::string prefix_;
  model::Millis unit_ms_;
  model::Millis now_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  // The wall clock at start_: model ms t is wall_start_ + t x unit_ms on the server's clock
  // (stream ids; the same host).
  std::chrono::system_clock::time_point wall_start_ = std::chrono::system_clock::now();
  struct ContextFree {
    void operator()(redisContext* c) const;
  };
  std::unique_ptr<redisContext, ContextFree> ctx_;
  std::map<std::string, Topic> topics_;
  std::vector<std::string> topic_order_;  // creation order, as expire walks them
  bool owner_ = true;                     // false for a worker: it serves poll, ack and nack
};

}  // namespace conformance
