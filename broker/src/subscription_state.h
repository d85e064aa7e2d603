// The per-subscription state machine shared by push and pull delivery (SPEC R3-R13).
#pragma once

#include <cstdint>
#include <map>
#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/message.h"
#include "broker/options.h"
#include "broker/stats.h"
#include "sync/sync.h"
#include "topic_log.h"

namespace broker {

/// How a subscription's messages are consumed.
enum class Kind { kPush, kPull };

/// One handler member of a push subscription (a group has several).
struct Member {
  std::string name;
  std::shared_ptr<const Handler> handler;
};

/// A message handed out and not yet confirmed or returned.
struct Held {
  MessagePtr message;
  std::string member;
  Time deadline;
  int attempt;
};

/// Why an offer or a held message failed (SPEC R7 reason strings).
struct Failure {
  std::string reason;
};

/// The shared state of one subscription (or push group). Every method REQUIRES mu except
/// the constant accessors; callers hold mu with sync::MutexLock. Lock order: a
/// subscription's mu comes after its topic's mu and before the topic log's mu.
class SubscriptionState {
 public:
  /// Options of the state, constant after construction.
  struct Config {
    Kind kind = Kind::kPush;
    std::string topic;
    std::string name;  // subscription name, or the group name of a push group
    Headers header_filter;
    Predicate predicate;
    int max_deliveries = kDefaultMaxDeliveries;
    Millis ack_timeout{0};
    StartPosition start;
    bool group = false;
  };

  SubscriptionState(Config config, std::shared_ptr<TopicLog> log, Offset cursor);

  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] const std::shared_ptr<TopicLog>& log() const { return log_; }

  mutable sync::Mutex mu;

  /// SPEC R3: drops waiting offsets below the oldest kept one and counts them.
  void catch_up() REQUIRES(mu);
  /// SPEC R5/R6: takes the next message, counts the offer, and holds it for member until
  /// deadline. Returns null when nothing is waiting.
  std::optional<Held> take_next(const std::string& member, Time deadline) REQUIRES(mu);
  /// SPEC R7: confirms a held message. False if it is not held (forgotten or finished).
  bool confirm(Offset offset) REQUIRES(mu);
  /// SPEC R7: fails a held message: dead letter or back to redelivery. Returns true if it
  /// was dead-lettered.
  bool fail(Offset offset, const Failure& failure) REQUIRES(mu);
  /// SPEC R11: the held entry if member holds offset and now < deadline.
  Held* held_by(Offset offset, const std::string& member, Time now) REQUIRES(mu);
  /// SPEC R11: offsets held past their deadline at now, ascending.
  std::vector<Offset> late(Time now) const REQUIRES(mu);
  /// SPEC R12: moves the cursor and forgets everything handed out or waiting.
  void seek(Offset offset) REQUIRES(mu);
  /// SPEC R13.
  SubscriptionStats stats() REQUIRES(mu);
  /// Whether a message could be offered now (redelivery or a matching one after the cursor).
  bool has_next() REQUIRES(mu);
  [[nodiscard]] const std::vector<DeadLetter>& dead_letters() const REQUIRES(mu) {
    return dead_;
  }

  // ---- lifecycle and push delivery bookkeeping ----
  bool alive GUARDED_BY(mu) = true;
#if defined(BROKER_MUTANTS)
  // Planted bug unsubscribe_one_more: the unsubscribed member, still offered once more.
  std::optional<Member> mutant_one_more GUARDED_BY(mu);
#endif
  std::uint64_t epoch GUARDED_BY(mu) = 0;  // bumped by seek: results of older offers are void
  std::vector<Member> members GUARDED_BY(mu);
  std::string last_member GUARDED_BY(mu);  // who got the previous offer (SPEC R10)
  void* delivering GUARDED_BY(mu) = nullptr;  // context running an offer, or null
  std::string delivering_member GUARDED_BY(mu);
  std::uint64_t offer_token GUARDED_BY(mu) = 0;  // identifies the running offer
  bool backing_off GUARDED_BY(mu) = false;       // threaded dispatchers: failed, waiting
  /// Threaded dispatchers: a wake-up is already on its way, so publishers skip the
  /// dispatcher's locks. Set by notify (acq_rel exchange); the consumer clears it with an
  /// exchange before it looks for work, which makes every append before a skipped notify
  /// visible to that look.
  std::atomic<bool> wake_pending{false};
  sync::CondVar offer_done;                      // notified when an offer ends

  /// SPEC R10: the member to offer the next message to; null if there is none.
  const Member* next_member() const REQUIRES(mu);

 private:
  bool matches(const Message& m) const;

  const Config config_;
  const std::shared_ptr<TopicLog> log_;
  Offset cursor_ GUARDED_BY(mu);
  std::set<Offset> redelivery_ GUARDED_BY(mu);
  std::map<Offset, Held> in_flight_ GUARDED_BY(mu);
  std::map<Offset, int> attempts_ GUARDED_BY(mu);
  std::vector<DeadLetter> dead_ GUARDED_BY(mu);
  SubscriptionStats counters_ GUARDED_BY(mu);
};

}  // namespace broker
