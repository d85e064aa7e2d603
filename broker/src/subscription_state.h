// The per-subscription state machine shared by push and pull delivery (SPEC R3-R13).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "broker/ack_result.h"
#include "broker/clock.h"
#include "broker/message.h"
#include "broker/stats.h"
#include "commit_sink.h"
#include "held_run.h"
#include "members.h"
#include "node_pool.h"
#include "offer_slot.h"
#include "subscription_config.h"
#include "sync/sync.h"
#include "topic_log.h"
#include "wake_signal.h"

namespace broker {

/// R31: one key's waiting offsets in an ordered subscription, and the slot of its held count
/// (SubscriptionState::held_).
struct KeyLine {
  std::uint32_t slot = 0;
  std::set<Offset> waiting;
};

/// Hashes keys as string views, so a message's key (a view of its record) finds its line
/// without a copy.
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
};

/// A message handed out and not yet confirmed or returned.
struct Held {
  MessagePtr message;
  std::string member;
  Time deadline;
  int attempt;
  /// R31: the line of the message's key while it is held (ordered subscriptions, keyed
  /// messages); the subscription keeps a held key's line where it is.
  KeyLine* line = nullptr;
};

/// Where a lane's run (R15) stood before one of its takes: undoing the takes from there
/// (SubscriptionState::give_back) needs the cursor and the counters the takes moved.
struct RunMark {
  Offset cursor = 0;
  std::uint64_t filtered = 0;
  std::uint64_t skipped = 0;
};

/// R32: the consumer group member that owns a group's partition subscription, the
/// generation it has owned it since, and the group's current generation. Only the owner
/// polls, and only its receipts of generations since..generation are answered.
struct GroupOwner {
  std::string member;  // "" while the group has no member for this partition
  std::uint64_t since = 0;
  std::uint64_t generation = 0;
};

/// Why an offer or a held message failed (SPEC R7 reason strings), and when.
struct Failure {
  std::string reason;
  Time at;
  bool terminal = false;  // SPEC R23: dead-lettered at once, whatever the attempts
  /// SPEC R24: how long a returned message waits (none: the back-off list's wait).
  std::optional<Millis> delay = std::nullopt;
};

/// The shared state of one subscription (or push group). Every method REQUIRES mu except
/// the constant accessors; callers hold mu with sync::MutexLock. Lock order: a
/// subscription's mu comes after its topic's mu and before the topic log's mu.
class SubscriptionState {
 public:
  /// `sink` (null: in memory) saves the position of a durable topic's subscription.
  SubscriptionState(SubscriptionConfig config, std::shared_ptr<TopicLog> log,
                    std::shared_ptr<const Clock> clock, Offset cursor,
                    std::shared_ptr<CommitSink> sink = nullptr);

  // Constant after construction.
  [[nodiscard]] const SubscriptionConfig& config() const { return config_; }
  /// R33: whether the store this state commits to has failed (then nothing is offered).
  [[nodiscard]] bool storage_failed() const { return sink_ && sink_->failed(); }
  [[nodiscard]] const std::shared_ptr<TopicLog>& log() const { return log_; }
  [[nodiscard]] const std::shared_ptr<const std::string>& topic_name() const { return topic_; }
  /// The injected clock's time (push failures and dead letters are stamped with it).
  [[nodiscard]] Time now() const { return clock_->now(); }

  mutable sync::Mutex mu;
  /// The running push offer, if any (offer.cpp is the only code that begins or ends one).
  OfferSlot offers GUARDED_BY(mu);
  /// R32: set while a consumer group keeps this (pull) subscription on one of its partitions.
  std::optional<GroupOwner> owner GUARDED_BY(mu);
  /// R11 and R32: the message receipt r may answer (ack, nack, term, extend), or null: its
  /// member holds it before its deadline and, on a group's partition, r's generation is
  /// one its member has owned the partition through. Sets `why` to the outcome
  /// (AckOutcome's order: kAccepted when it returns the message).
  Held* answerable(const Receipt& r, Time now, AckOutcome& why) REQUIRES(mu);
  /// Push: the handler members and whose turn it is.
  Members members GUARDED_BY(mu);
  /// Pull: poll_wait calls waiting on this subscription, each counted once its first poll
  /// found nothing, until it returns. A call that may make a message ready without growing
  /// the log (a hand-back, a freed place) reads it under mu and, if not 0, wakes the log's
  /// waiters after releasing mu: every look of a counted wait after its first came after
  /// its count, so a change that such a look missed sees the count.
  std::size_t waiting_polls GUARDED_BY(mu) = 0;
  /// Threaded dispatchers: a wake-up is on its way (publishers skip the locks).
  WakeSignal wake;
  /// R15 runs: changes whenever something changes which message must be offered next or
  /// whether one may be (seek, pause, redrive, unsubscribe); a lane's run reads it between
  /// offers, without mu, and ends when it moved. Written only under mu (cut_runs).
  [[nodiscard]] std::uint64_t run_cuts() const {
    // Acquire pairs with cut_runs' release: a run that sees the cut also sees what the
    // cutting call wrote before it (it takes mu before using any of it anyway).
    return run_cuts_.load(std::memory_order_acquire);
  }
  void cut_runs() REQUIRES(mu) { run_cuts_.fetch_add(1, std::memory_order_acq_rel); }

  /// SPEC R3: drops waiting offsets below the oldest kept one and counts them; returns that
  /// oldest kept offset as it looked.
  Offset catch_up() REQUIRES(mu);
  /// A returned message at offset (below the cursor), or null if retention dropped it: read
  /// without the log's lock when it is in the segment the cursor reads (the common case: a
  /// failure is retried soon), where publishers would otherwise meet the reader at every
  /// redelivery. Throws as TopicLog::read.
  MessagePtr read_returned(Offset offset) REQUIRES(mu);
  /// SPEC R5/R6: takes the next message (of the returned ones, only those whose wait is
  /// over at now, R24), counts the offer, and holds it for member until deadline. Returns
  /// none when nothing is ready.
  std::optional<Held> take_next(const std::string& member, Time deadline, Time now) REQUIRES(mu);
  /// R15 runs: whether take_next would take from the cursor (no returned message waits,
  /// not paused), the only takes a run extends with, so give_back can undo them.
  [[nodiscard]] bool run_may_extend() const REQUIRES(mu) { return redelivery_.empty() && !paused_; }
  /// R15 runs, their common case: takes up to max - taken.size() more messages from the
  /// cursor for member as take_next would one at a time (first offers, no deadline; the same
  /// catch-ups, filter and counts), appending each to `taken` and the run mark before its
  /// take to `marks`, and holds them without a map node each (HeldRun). Stops early when
  /// nothing is ready. False, with nothing taken, where a run must extend with take_next
  /// (ordered by key, durable, a returned message waiting, paused, or a counted attempt at
  /// or past the cursor). Throws as take_next.
  bool take_from_cursor(const std::string& member, std::size_t max, std::vector<Held>& taken,
                        std::vector<RunMark>& marks) REQUIRES(mu);
  /// R15 runs: takes `message`, which just failed (as its offer held it), again for member
  /// if it is exactly what take_next would take next at now (the only returned message, its
  /// wait over, still kept; not paused, not ordered by key), so a run may re-offer it before
  /// the rest it holds. Not for a durable subscription: its commits would save attempts of
  /// the rest, never offered. None, with nothing changed but a catch-up, otherwise.
  std::optional<Held> take_again(const MessagePtr& message, const std::string& member, Time now)
      REQUIRES(mu);
  /// R15 runs: the cursor and counters a take moves, to undo takes from here.
  [[nodiscard]] RunMark run_mark() const REQUIRES(mu) {
    return RunMark{cursor_, counters_.filtered, counters_.skipped};
  }
  /// R15 runs: undoes the takes between `before` and `after` (run marks), whose messages,
  /// `unoffered`, are still held and were never offered: they leave in_flight_, their
  /// attempts and the delivered counts go back, and the cursor returns to before.cursor,
  /// as if they had never been taken (also when retention caught the cursor up meanwhile).
  void give_back(const RunMark& before, const RunMark& after, std::span<const Held> unoffered)
      REQUIRES(mu);
  /// SPEC R7: confirms a held message. False if it is not held (forgotten or finished).
  bool confirm(Offset offset) REQUIRES(mu);
  /// SPEC R7: fails a held message: dead letter or back to redelivery (R23: a terminal
  /// failure always dead-letters). Returns true if it was dead-lettered.
  bool fail(Offset offset, const Failure& failure) REQUIRES(mu);
  /// R15 runs: fails the front of the run it holds (`offset`) and takes it again at once,
  /// leaving what fail(offset, failure) followed by take_again at now leaves, but with the
  /// message held where it was: no map node made and erased for its entry, its attempts and
  /// its wait. False, with nothing changed but
  /// a catch-up, where that pair would not retake it: not the run's front, dead-lettered
  /// (R23), a wait before its next offer (R24), paused, ordered by key, durable, another
  /// returned message, or dropped by retention.
  bool retry_run_front(Offset offset, const Failure& failure, Time now) REQUIRES(mu);
  /// SPEC R22: how many messages are held (every member's).
  [[nodiscard]] std::size_t held_count() const REQUIRES(mu) {
    return in_flight_.size() + run_held_.size();
  }
  /// R32: every held offset, ascending.
  [[nodiscard]] std::vector<Offset> held_offsets() const REQUIRES(mu);
  /// SPEC R11: offsets held past their deadline at now, ascending.
  [[nodiscard]] std::vector<Offset> late(Time now) const REQUIRES(mu);
  /// The earliest deadline of a held message, if any.
  [[nodiscard]] std::optional<Time> earliest_deadline() const REQUIRES(mu);
  /// SPEC R12: moves the cursor and forgets everything handed out or waiting; voids the
  /// result of a running offer.
  void seek(Offset offset) REQUIRES(mu);
  /// SPEC R13.
  SubscriptionStats stats() REQUIRES(mu);
  /// SPEC R27: at now.
  Lag lag(Time now) REQUIRES(mu);
  /// SPEC R26: while paused take_next hands out nothing.
  [[nodiscard]] bool paused() const REQUIRES(mu) { return paused_; }
  /// SPEC R26: returns whether it changed.
  bool set_paused(bool paused) REQUIRES(mu);
  /// SPEC R25: dead letters of kept messages leave; those not already waiting or held are
  /// returned with their attempts back at 0. Returns how many left.
  std::size_t redrive() REQUIRES(mu);
  /// SPEC R25: drops the first occurrence of each of `gone` (same message, attempts, reason
  /// and time) that is still a dead letter, counting it as redriven (else purged); returns
  /// how many it dropped.
  std::size_t drop_dead_letters(const std::vector<DeadLetter>& gone, bool redriven) REQUIRES(mu);
  /// Whether a message is waiting to be offered (a returned one, or a matching one after the
  /// cursor); with `now`, only returned ones whose wait is over by then count (R24).
  bool has_next(std::optional<Time> now = std::nullopt) REQUIRES(mu);
  /// SPEC R24: the earliest time a returned message may be offered again, if one waits past
  /// `now`.
  [[nodiscard]] std::optional<Time> next_wait_end(Time now) const REQUIRES(mu);
  [[nodiscard]] const std::vector<DeadLetter>& dead_letters() const REQUIRES(mu) { return dead_; }
  /// A restarted (or resumed) subscription: the attempts and dead letters it had saved, at
  /// the cursor it was built with; that is also what counts as saved (R19).
  void restore(std::map<Offset, int> attempts, std::vector<DeadLetter> dead) REQUIRES(mu);
  /// A resumed subscription (R20) goes on where `old`, which holds nothing, stood: cursor,
  /// returned messages (a redrive, R25), attempts, dead letters, counters, pause (R26) and
  /// what was saved.
  void continue_from(const SubscriptionState& old) REQUIRES(mu, old.mu);
  /// SPEC R19: the committed position (lowest offset not confirmed, dead-lettered, filtered
  /// out or skipped).
  [[nodiscard]] Offset committed() const REQUIRES(mu);
  /// SPEC R19: writes a commit if the committed position moved or a message died since the
  /// last one (`force`: always, and synced whatever the policy). Returns a ticket for
  /// wait_saved (0: nothing to wait for). Throws IoError.
  std::uint64_t save_position(bool force = false) REQUIRES(mu);
  /// Waits, without mu, until a save_position's record is as durable as its policy says.
  void wait_saved(std::uint64_t ticket) EXCLUDES(mu);

 private:
  bool matches(const Message& m) const;
  /// R31: h is no longer held (ordered subscriptions count held keys).
  void release_key(const Held& h) REQUIRES(mu);
  /// R31's index: a key's line, made if it has none (and then idle lines are swept when
  /// they have come to outnumber the live ones).
  KeyLine& line_of(std::string_view key) REQUIRES(mu);
  /// R31's index: whether a line has nothing held and nothing waiting.
  [[nodiscard]] bool idle(const KeyLine& line) const REQUIRES(mu);
  /// R31's index: a key's lowest waiting message leaves (drop) or joins (add, unless the key
  /// is held) the candidates; call drop before and add after changing the line.
  void drop_head(const KeyLine& line) REQUIRES(mu);
  void add_head(const KeyLine& line) REQUIRES(mu);
  /// Every change to redelivery_ but clear goes through these, so the index follows.
  void add_waiting(Offset offset, Time not_before, std::string_view key) REQUIRES(mu);
  void erase_waiting(Offset offset) REQUIRES(mu);
  /// Rebuilds the index from redelivery_ (after it was replaced or cleared).
  void index_waiting() REQUIRES(mu);
  using InFlight = std::pmr::map<Offset, Held>;
  /// The in_flight_ entry of a held offset, moved there first if run_held_ holds it (its
  /// front alone when it is the front, else the whole run); end() if it is not held.
  InFlight::iterator find_held(Offset offset) REQUIRES(mu);
  /// Moves everything run_held_ holds into in_flight_.
  void spill_run() REQUIRES(mu);
  /// run_held_'s i-th message as the in_flight_ entry it stands for.
  [[nodiscard]] Held run_entry(std::size_t i) const REQUIRES(mu);
  /// Appends run_held_'s offsets to out and sorts it (out: other held offsets, ascending).
  void add_run_offsets(std::vector<Offset>& out) const REQUIRES(mu);
  /// SPEC R24: how long a message whose offer number `attempts` failed waits before it is
  /// offered again: as the failure asked, else as the back-off list says.
  [[nodiscard]] Millis wait_after(int attempts, const Failure& failure) const;
  /// Holds message for member until deadline: counts the offer and its attempt.
  /// R34: whether offset's saved attempts (a restart keeps them, R20) already reached
  /// max_deliveries, so it is dead-lettered at the cursor instead of offered again.
  bool spent(Offset offset) const REQUIRES(mu);
  /// R34: dead-letters a spent message ("max deliveries", its saved attempts) unoffered.
  void bury(MessagePtr message, Time now) REQUIRES(mu);
  Held& hold(MessagePtr message, const std::string& member, Time deadline, KeyLine* line)
      REQUIRES(mu);
  /// Whether every message matches (no header filter, no predicate).
  [[nodiscard]] bool unfiltered() const;

  sync::Atomic<std::uint64_t> run_cuts_{0};

  // Constant after construction.
  const SubscriptionConfig config_;
  const std::shared_ptr<TopicLog> log_;
  const std::shared_ptr<const Clock> clock_;
  const std::shared_ptr<const std::string> topic_;

  // State below is protected by mu.
  Offset cursor_ GUARDED_BY(mu);
  // Returned offsets, each with the time it may be offered again from (SPEC R24).
  std::map<Offset, Time> redelivery_ GUARDED_BY(mu);
  // The held messages' map nodes come from this pool and go back to it: a lane or pool
  // task takes and confirms a message per handler call, and a node from the pool's free
  // list is one pointer move where malloc and free were a tenth of a busy lane's time. It
  // keeps the most nodes ever in use at once (held: at most kMaxInFlight per pull
  // subscription; attempts: held or returned). Used only through in_flight_ and attempts_,
  // so only under mu.
  NodePool held_nodes_;
  InFlight in_flight_ GUARDED_BY(mu){&held_nodes_};
  // Held messages too, apart from in_flight_: those a lane's run took from the cursor
  // (take_from_cursor), first offers without a deadline, kept in a vector; confirming them
  // in order costs no lookup. Every query of what is held asks both; anything else than
  // confirming the front or giving back the back moves them into in_flight_ (find_held).
  HeldRun run_held_ GUARDED_BY(mu);
  // R31, ordered subscriptions only: a line for each non-empty key with a held or waiting
  // message, kept with in_flight_ and redelivery_ so an offer need not walk every held
  // message: one lookup for a key at the cursor, none for a confirmation (Held::line).
  // Lines that went idle stay until a sweep (keys come back: a line made and dropped per
  // message was an allocation, a free and two lookups more, with workers on other cores
  // touching each node); a sweep runs when the lines reach sweep_at_ (twice what the last
  // sweep left, at least kMinSweep), so there are never more than kMinSweep lines or twice
  // the most keys ever held or waiting at once.
  std::unordered_map<std::string, KeyLine, KeyHash, std::equal_to<>> keys_ GUARDED_BY(mu);
  // Each line's held count, by its slot, apart from the lines: an offer and a confirmation
  // write only these packed counts, so the lines (read by every offer of a key) stay in
  // every worker's cache, and the keys a worker takes one after another share cache lines.
  std::vector<std::uint32_t> held_ GUARDED_BY(mu);
  std::vector<std::uint32_t> free_slots_ GUARDED_BY(mu);  // of swept lines
  std::size_t sweep_at_ GUARDED_BY(mu) = kMinSweep;
  static constexpr std::size_t kMinSweep = 1024;
  // R31, ordered subscriptions only, the rest of the index of redelivery_: each waiting
  // offset's key, and the candidates an offer may take (keyless waiting messages and the
  // lowest waiting one of each key not held), so an offer costs O(log n) however many wait
  // passed over.
  std::map<Offset, std::string> waiting_key_ GUARDED_BY(mu);
  std::set<Offset> free_waiting_ GUARDED_BY(mu);
  // Offers so far per offset: every returned one's, and a held one's if it was offered
  // before or the subscription is durable (its commits save them, R19); a held message
  // without an entry is at attempt 1 (Held::attempt says it either way). Nodes from
  // held_nodes_ too.
  std::pmr::map<Offset, int> attempts_ GUARDED_BY(mu){&held_nodes_};
  // Where the cursor reads in the log: the segment it read last (reads need no lock).
  LogCursor reader_ GUARDED_BY(mu);
  std::vector<DeadLetter> dead_ GUARDED_BY(mu);
  bool paused_ GUARDED_BY(mu) = false;
  SubscriptionStats counters_ GUARDED_BY(mu);
  // What the last commit saved (durable subscriptions only).
  const std::shared_ptr<CommitSink> sink_;
  Offset saved_position_ GUARDED_BY(mu) = 0;
  std::size_t saved_dead_ GUARDED_BY(mu) = 0;
  // Dead letters left since the last commit (R25): the next one rewrites the whole list.
  bool dead_rewritten_ GUARDED_BY(mu) = false;
};

}  // namespace broker
