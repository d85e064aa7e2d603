// The NATS JetStream target: the common subset of the operation language run against a
// real nats-server through the C client (libnats).
//
// A topic is a stream `<prefix>_<name>` on subject `<prefix>.<name>` (names encoded to
// [A-Za-z0-9_-]); a pull subscription is a durable pull consumer (explicit acks, AckWait =
// ack_timeout model ms, MaxDeliver = max_deliveries) read by pull requests, each of which a
// poll waits for the server to end (so no delivery reaches a request nobody reads), plus a
// subscription to the consumer's max-deliveries and terminated advisories, which become its
// dead letters. A topic made with retention_messages = N is a stream with MaxMsgs = N,
// DiscardOld; a max_in_flight is the consumer's MaxAckPending; a seek deletes the consumer
// and makes it again under a new name, delivering from the offset; a nack's delay is
// `-NAK {"delay": ns}`. A push subscription (R8) is a durable push consumer (MaxAckPending 1,
// so one offer at a time; an AckWait of a day, since a push offer has no deadline) whose
// deliver subject the client subscribes to; drain runs the subscription's handler script
// on each delivery in the model's order (topics, then subscriptions, in creation order) and
// sends its answer (+ACK, -NAK, +TERM) as a request; a subscription is done when nothing
// has arrived and the server reports nothing pending or unacknowledged for its consumer.
// The engine answers: ack, nack, term and extend go to the server through the reply subject
// of the last delivery of that message to that member (the handle its client holds), as a
// request the server answers, and whatever the server did is what the steps after show;
// true means the server answered. Only a member never given the message is answered by the
// adapter (false: its client has nothing to send). What the adapter does in the engine's
// place, each named in CONFORMANCE.md as the adapter's: header filters (poll acks a
// non-matching message at once), deadlines (now + ack timeout on the model's clock),
// extend by the ack timeout only (+WPI knows no other), and the model's clock: one model
// ms is `unit_ms` real ms, `advance` sleeps, and the server expires held messages on its
// own (`expire` returns nothing).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/target.h"
#include "model/types.h"

// libnats' opaque handles (nats/nats.h), kept out of this header.
struct __natsConnection;
struct __natsSubscription;
struct __natsMsg;
struct __jsCtx;

namespace conformance {

class JetStreamPull;

class JetStreamTarget : public Target {
 public:
  /// Connects to `url` (throws TargetFailure if it cannot). `prefix` keeps the streams of
  /// several targets on one server apart; `unit_ms` is how many real ms one model ms lasts.
  /// `reconnect`: the client reconnects to a restarted server (~10 s bound; fault runs)
  /// instead of failing for good when the connection drops. `url` may list several servers
  /// of one cluster, comma-separated; `replicas` is each stream's replica count there.
  JetStreamTarget(std::string url, std::string prefix, model::Millis unit_ms,
                  bool reconnect = false, int replicas = 1);
  /// Destroys held messages and subscriptions, deletes every stream this target created,
  /// closes the connection.
  ~JetStreamTarget() override;
  JetStreamTarget(const JetStreamTarget&) = delete;
  JetStreamTarget& operator=(const JetStreamTarget&) = delete;

  [[nodiscard]] std::string name() const override { return "jetstream"; }
  /// The common subset, topics that keep their newest N messages (MaxMsgs), pull
  /// subscriptions with a max_in_flight (MaxAckPending), seek (R12: the consumer made
  /// again at the offset), seek by time (R28: DeliverByStartTime) and nacks with a delay
  /// (R24: `-NAK {"delay": ns}`), lag (R27: consumer info's counts), and push subscriptions
  /// with the drain that serves them (R8: push_without_effects).
  [[nodiscard]] bool serves(const oplang::Op& op) const override;
  /// True: JetStream filters subjects, not headers; the adapter acks what the filter skips.
  [[nodiscard]] bool filter_is_the_adapters() const override { return true; }
  oplang::Outcome step(const oplang::Op& op) override;

  /// The model clock (model ms since the start).
  [[nodiscard]] model::Millis now() const { return now_; }
  /// Model ms the real clock has run ahead of now() since the target was made, or the
  /// server's round trip now if that is more (the engine's own lag).
  [[nodiscard]] model::Millis lag() const override;
  /// The JetStream stream a topic of this target is ("" if there is no such topic).
  [[nodiscard]] std::string stream_of(const std::string& topic) const;
  /// Its own connection, with its own pull subscription bound to each durable consumer
  /// (as several processes share one durable): the server decides which worker gets what.
  /// It reads no advisories and deletes nothing.
  std::unique_ptr<Target> worker() override;

 private:
  struct WorkerOf {
    const JetStreamTarget& parent;
  };
  explicit JetStreamTarget(WorkerOf of);
  void connect();
  // Everything the destructor does (also for a worker whose constructor failed).
  void close();
  struct Options {
    model::Headers filter;
    model::Millis ack_timeout = 0;
    int max_deliveries = 0;
    model::Start start;
    std::size_t max_in_flight = 0;
    bool operator==(const Options&) const = default;
  };
  struct Sub {
    std::uint64_t order = 0;  // when it was made among its topic's (R8's drain order)
    bool push = false;        // a push subscription (R8): served by drain, not polled
    model::Script script;     // push: the handler's answers, one per offer, then confirm
    std::size_t next_step = 0;
    __natsSubscription* deliveries = nullptr;  // push: its consumer's deliver subject
    std::string consumer;                      // the durable's name now (a seek makes a new one)
    std::uint64_t seeks = 0;
    Options options;
    std::unique_ptr<JetStreamPull> pull;  // this connection's pull requests
    __natsSubscription* advisories = nullptr;
    // offset -> member -> the last delivery of it to that member: what its acks go through.
    std::map<model::Offset, std::map<std::string, __natsMsg*>> given;
    std::map<model::Offset, std::string> payloads;    // every payload fetched, for dead letters
    std::map<model::Offset, model::Headers> headers;  // and its headers (a dead letter has them)
    std::vector<model::DeadLetter> dead;
  };
  struct Topic {
    std::uint64_t order = 0;  // when it was made (R8's drain order)
    std::string stream;
    std::string subject;
    std::map<std::string, std::unique_ptr<Sub>> subs;
  };

  oplang::Value create_topic(const oplang::CreateTopic& op);
  oplang::Value delete_topic(const oplang::DeleteTopic& op);
  oplang::Value publish(const oplang::Publish& op);
  oplang::Value subscribe_pull(const oplang::SubscribePull& op);
  // R8: a push consumer on the topic, its deliveries answered by op.script at each drain.
  oplang::Value subscribe(const oplang::Subscribe& op);
  // R8: every push subscription served in creation order (topics first); the offers made
  // go to `calls`; returns the count of confirmations.
  oplang::Value drain(std::vector<model::HandlerCall>& calls);
  // R8: offers sub's deliveries to its script until nothing is pending or one fails;
  // returns the confirmations. Throws TargetFailure.
  std::size_t serve(const std::string& topic_name, Topic& topic, const std::string& name, Sub& sub,
                    std::vector<model::HandlerCall>& calls);
  // Whether the server has nothing to deliver to sub's consumer and nothing unacknowledged.
  bool nothing_pending(const Topic& topic, const Sub& sub);
  // Waits (one model ms at most) for the dead letter of offset to be announced, so a
  // dead_letters right after a term sees it as the model's does.
  void await_dead_letter(const std::string& topic_name, const std::string& name, Sub& sub,
                         std::size_t dead_before, model::Offset offset);
  oplang::Value unsubscribe(const oplang::Unsubscribe& op);
  // R12: the durable consumer deleted and made again (same options, a new name) to deliver
  // from the offset; OffsetOutOfRange outside the stream's [first - 1, last] (the range
  // check is the adapter's: the server takes any start sequence).
  oplang::Value seek(const oplang::Seek& op);
  // Subscribes sub.advisories, makes the consumer (add_consumer) and binds sub.pull; on
  // TargetFailure leaves neither the advisory subscription nor the consumer.
  void open_consumer(const Topic& topic, Sub& sub, std::optional<model::Offset> from,
                     std::optional<std::int64_t> from_time = std::nullopt);
  // R28: the consumer made again as seek's is, delivering from the first message the
  // server stamped at or after the model time's wall-clock instant (DeliverByStartTime);
  // returns the offset the server says it starts at. InvalidArgument for a time after now
  // (the adapter's check, as the model's).
  oplang::Value seek_to_time(const oplang::SeekToTime& op);
  // Deletes sub's consumer and opens it again under its next name, delivering from
  // `from` (an offset) or `from_time` (wall-clock ns). Throws TargetFailure.
  void make_again(const std::string& topic_name, const std::string& name, Topic& topic, Sub& sub,
                  std::optional<model::Offset> from, std::optional<std::int64_t> from_time);
  // Makes the durable consumer of sub on the server, delivering from `from` (an offset) or
  // `from_time` (wall-clock ns) if given, else by its start option. Throws TargetFailure.
  void add_consumer(const Topic& topic, const Sub& sub, std::optional<model::Offset> from,
                    std::optional<std::int64_t> from_time = std::nullopt);
  oplang::Value poll(const oplang::Poll& op);
  oplang::Value ack(const oplang::Ack& op);
  oplang::Value nack(const oplang::Nack& op);
  oplang::Value term(const oplang::Term& op);
  // extend by the ack timeout: an in-progress ack (+WPI) sent as a request, so the server
  // has restarted AckWait when it returns. std::invalid_argument for another extension.
  oplang::Value extend(const oplang::Extend& op);
  // Sends an ack-protocol word (+ACK, -NAK, +TERM, +WPI) through the last delivery of the
  // message to member, as a request the server answers once the consumer has processed it;
  // false if member was never given it (nothing sent) or if the server has no responder
  // for it (the delivering consumer is gone: a seek made a new one). Throws Error (unknown topic or
  // subscription), TargetFailure (no answer).
  bool answer(const std::string& topic, const std::string& sub, model::Offset offset,
              const std::string& member, const char* word);
  oplang::Value advance(const oplang::Advance& op);
  // R27: messages is the consumer's num_pending (not yet delivered) plus num_ack_pending
  // (held, or returned and not yet offered again); the engine reports no age, so
  // oldest_age is 0 (switch lag_age_unknown).
  oplang::Value get_lag(const oplang::GetLag& op);
  oplang::Value dead_letters(const oplang::GetDeadLetters& op);

  Topic& topic_or_throw(const std::string& name);
  Sub& sub_or_throw(Topic& topic, const std::string& name);
  // Reads every advisory already received (waiting up to wait_ms for the first one).
  void drain_advisories(const std::string& topic, const std::string& name, Sub& sub,
                        std::int64_t wait_ms);
  void destroy_sub(Topic& topic, Sub& sub, bool delete_consumer);
  // Opens sub.pull for its durable consumer on this connection; throws TargetFailure.
  void bind_pull(const Topic& topic, Sub& sub);
  // The deliver subject of a push consumer of this target.
  [[nodiscard]] std::string deliver_subject(const Sub& sub) const;
  // WrongKind for a push subscription (poll, ack, nack, term, extend are the pull's).
  static void pull_only(const Sub& sub);
  // Unsubscribes and frees a push subscription's deliveries (nothing for a pull one).
  static void close_deliveries(Sub& sub);

  std::string url_;
  std::string prefix_;
  model::Millis unit_ms_;
  bool reconnect_ = false;
  int replicas_ = 1;
  model::Millis now_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  // The wall clock at start_: model ms t is wall_start_ + t x unit_ms on the server's clock
  // (message timestamps; the same host).
  std::chrono::system_clock::time_point wall_start_ = std::chrono::system_clock::now();
  __natsConnection* nc_ = nullptr;
  __jsCtx* js_ = nullptr;
  std::map<std::string, Topic> topics_;
  std::uint64_t next_order_ = 0;  // topics and subscriptions in the order they were made
  bool owner_ = true;             // false for a worker: it serves poll, ack and nack only
};

}  // namespace conformance
