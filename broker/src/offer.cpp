#include "offer.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "broker/errors.h"

namespace broker {
namespace {

/// One running handler call on this context; frames nest when a handler drains or offers
/// on another broker. The sync layer's context slot points at the innermost frame.
struct OfferFrame {
  SubscriptionState* subscription;
  OfferFrame* outer;
};

OfferFrame* innermost() { return static_cast<OfferFrame*>(sync::context_slot()); }

/// Pushes a frame for the handler call of s; pops it on every exit path.
class FrameScope {
 public:
  explicit FrameScope(SubscriptionState& s) : frame_{&s, innermost()} {
    sync::context_slot() = &frame_;
  }
  ~FrameScope() { sync::context_slot() = frame_.outer; }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  OfferFrame frame_;
};

/// Calls the handler; a false or any exception is a failure with its SPEC R7 reason, a
/// Terminate a terminal one (R23).
bool call_handler(const Handler& handler, const Delivery& d, std::string& reason, bool& terminal) {
  try {
    if (handler(d)) return true;
    reason = "rejected";
  } catch (const Terminate& e) {
    reason = e.what();
    terminal = true;
  } catch (const std::exception& e) {
    reason = std::string("exception: ") + e.what();
  } catch (...) {
    reason = "unknown exception";
  }
  return false;
}

}  // namespace

std::uint64_t save_quietly(SubscriptionState& s) {
  try {
    return s.save_position();
  } catch (const Error&) {
    return 0;  // the store has failed (R33): the drain or the dispatcher sees it next
  }
}

void wait_quietly(SubscriptionState& s, std::uint64_t ticket) {
  try {
    s.wait_saved(ticket);
  } catch (const Error&) {
    // The store has failed (R33): no sync is tried again; the drain reports it.
  }
}

SubscriptionState* current_offer() {
  const OfferFrame* f = innermost();
  return f == nullptr ? nullptr : f->subscription;
}

bool running_handler_of(const BrokerImpl* broker) {
  for (const OfferFrame* f = innermost(); f != nullptr; f = f->outer) {
    if (f->subscription->config().broker == broker) return true;
  }
  return false;
}

namespace {

/// A message taken for a push offer whose handler has not run yet.
struct Taken {
  std::shared_ptr<const Handler> handler;
  Held held;
  OfferTicket ticket;
};

/// What an offer whose result is not applied counts as (none: its result applies).
std::optional<OfferResult> unapplied(OfferEnd end) {
  switch (end) {
    case OfferEnd::kAbandoned:
      return OfferResult::kFailed;  // failed already, by the handler timeout
    case OfferEnd::kGone:
      return OfferResult::kGone;
    case OfferEnd::kSeeked:
      return OfferResult::kIgnored;
    case OfferEnd::kApply:
      break;
  }
  return std::nullopt;
}

/// R34: saves t's attempt (a forced commit of s, waited for as commit_sync says) before its
/// handler runs. False if the store failed (R33): the offer ends, its handler not called.
bool save_attempt(SubscriptionState& s, const Taken& t) {
  try {
    std::uint64_t ticket = 0;
    {
      sync::MutexLock lock(s.mu);
      ticket = s.save_position(true);
    }
    s.wait_saved(ticket);
    return true;
  } catch (const Error&) {
    sync::MutexLock lock(s.mu);
    (void)s.offers.finish(t.ticket);
    return false;
  }
}

/// Takes the next message for the member whose turn it is and begins its offer; returns
/// what ends the run instead if nothing was taken.
std::optional<OfferResult> take(SubscriptionState& s, Time now, Taken& out) REQUIRES(s.mu) {
  if (!s.offers.open()) return OfferResult::kGone;
  if (s.offers.busy()) return OfferResult::kBusy;
  const Member* member = s.members.next();
  // A consumer group's partition waits for an owner (R32); any other state without a
  // member is gone.
  if (member == nullptr) return s.owner ? OfferResult::kNothing : OfferResult::kGone;
  std::optional<Held> next;
  try {
    next = s.take_next(member->name, Time::max(), now);  // push: no deadline
  } catch (const Error&) {
    // A recovered record that cannot be read back (I/O error, a file changed under us):
    // nothing was taken, so the offer is tried again at the next wake (R18).
    return OfferResult::kNothing;
  }
  if (!next) return OfferResult::kNothing;
  out.held = std::move(*next);
  out.handler = member->handler;
  s.members.took_turn(member->name);
  out.ticket = s.offers.begin(member->name);
  return std::nullopt;
}

}  // namespace

OfferRun offer_run(const std::shared_ptr<SubscriptionState>& sp, OfferWatch* watch, int max,
                   const std::function<bool()>& may_go_on,
                   const std::function<void()>& on_progress) {
  SubscriptionState& s = *sp;
  OfferRun run;
  if (s.storage_failed()) return run;  // R33: a failed store offers nothing (kNothing)
  Taken t;
  {
    const Time now = s.now();  // R24's waits; the clock is user code: never under a lock
    sync::MutexLock lock(s.mu);
    if (const std::optional<OfferResult> none = take(s, now, t)) {
      run.last = *none;
      return run;
    }
  }
  for (;;) {
    if (s.config().durable_attempts && !save_attempt(s, t)) return run;
    ++run.offers;
    if (watch != nullptr) watch->started(sp, t.ticket.token);
    std::string reason;
    bool confirmed = false;
    bool terminal = false;
    {
      FrameScope frame(s);
      sync::schedule_point();
      confirmed = call_handler(*t.handler, Delivery{s.topic_name(), t.held.message, t.held.attempt},
                               reason, terminal);
      sync::schedule_point();
    }
    if (watch != nullptr) watch->ended();
    const Time ended_at = s.now();  // the clock is user code: never under a lock
    // Asked before the lock: a stop that came during the handler ends the run here, and no
    // next message is taken for a handler that would not be called.
    const bool more = run.offers < max && may_go_on();

    std::uint64_t saved = 0;
    bool took = false;
    {
      sync::MutexLock lock(s.mu);
      if (const std::optional<OfferResult> void_end = unapplied(s.offers.finish(t.ticket))) {
        run.last = *void_end;
        run.failed_in_a_row = run.last == OfferResult::kFailed ? 1 : 0;
        return run;
      }
      const Offset offset = t.held.message->offset();
      if (confirmed) {
        run.last = s.confirm(offset) ? OfferResult::kConfirmed : OfferResult::kFailed;
      } else {
        s.fail(offset, Failure{reason, ended_at, terminal});
        run.last = OfferResult::kFailed;
      }
      run.failed_in_a_row = run.last == OfferResult::kFailed ? 1 : 0;
      saved = save_quietly(s);
      // The batch: after a confirmation (never after a failure: R15 re-offers or backs
      // off), the next message is taken in the same critical section. Not while a commit
      // waits to be durable: its wait comes first (R19, each offer's end).
      if (more && run.last == OfferResult::kConfirmed && saved == 0) {
        t = Taken{};
        if (const std::optional<OfferResult> none = take(s, ended_at, t)) {
          run.next = *none;
        } else {
          took = true;
        }
      }
    }
    wait_quietly(s, saved);
    if (!took) return run;
    on_progress();  // the applied offer; the caller reports the run's last one
  }
}

namespace {

/// A lane's run (R15): messages taken in one critical section, offered one at a time.
struct Run {
  std::shared_ptr<const Handler> handler;
  OfferTicket ticket;
  std::vector<Held> taken;     // the run is taken[first, size()): retakes move first on
  std::vector<RunMark> marks;  // marks[i]: where the run stood before taken[i + 1]
  std::size_t first = 0;
  RunMark end;             // after its last take
  std::uint64_t cuts = 0;  // s.run_cuts() when it was taken
  bool at_end = false;     // it stopped short because nothing more was ready
};

/// Takes the next message as take() does and, while nothing but the cursor can come next,
/// up to max - 1 more for the same member; returns what ends the run if nothing was taken.
std::optional<OfferResult> take_run(SubscriptionState& s, Time now, std::size_t max, Run& out)
    REQUIRES(s.mu) {
  if (s.storage_failed()) return OfferResult::kNothing;  // R33: a failed store offers nothing
  Taken first;
  if (const std::optional<OfferResult> none = take(s, now, first)) return none;
  out.handler = std::move(first.handler);
  out.ticket = first.ticket;
  out.taken.clear();
  out.marks.clear();
  out.first = 0;
  out.taken.push_back(std::move(first.held));
  const std::string member = out.taken.front().member;
  bool extended = false;  // by take_from_cursor, or not at all
  out.at_end = false;
  try {
    extended = s.take_from_cursor(member, max, out.taken, out.marks);
    out.at_end = extended && out.taken.size() < max;
  } catch (const Error&) {
    extended = true;  // as take(): what it took is the run, the rest at the next take
  }
  while (!extended && out.taken.size() < max && s.run_may_extend()) {
    const RunMark mark = s.run_mark();
    std::optional<Held> next;
    try {
      next = s.take_next(member, Time::max(), now);
    } catch (const Error&) {
      break;  // as take(): tried again at the next take
    }
    if (!next) {
      out.at_end = true;
      break;
    }
    out.marks.push_back(mark);
    out.taken.push_back(std::move(*next));
  }
  out.end = s.run_mark();
  out.cuts = s.run_cuts();
  return std::nullopt;
}

/// The member a failed run message may be offered to again at once (R15: the next in turn,
/// while the offers are open and nothing cut the run), or null.
const Member* retry_member(SubscriptionState& s, const Run& run) REQUIRES(s.mu) {
  if (!s.offers.open() || s.offers.busy() || s.run_cuts() != run.cuts) return nullptr;
  return s.members.next();
}

/// The run goes on from its failed message taken[offered - 1], offered again to member.
void restart_at_failed(SubscriptionState& s, const Member& member, std::size_t offered, Run& run)
    REQUIRES(s.mu) {
  s.members.took_turn(member.name);
  run.ticket = s.offers.begin(member.name);
  run.handler = member.handler;
  // The run now starts at the failed message; what it offered before stays behind `first`
  // rather than being erased: erasing would move every Held of the rest down (a 64-message
  // run failing halfway would move 32; BENCHMARKS.md, "1% failing"). marks[i] still
  // stands before taken[i + 1].
  run.first = offered - 1;
}

/// After the first failure of a row in run, whose messages before taken[offered] were offered
/// and whose last one failed (not yet applied): fails it and takes it again in place as
/// the first of a run that goes on with the rest it took (SubscriptionState::retry_run_front),
/// where failing it and retake_failed would do the same. Else false, with nothing changed but a
/// catch-up: the caller fails it.
bool retry_in_place(SubscriptionState& s, const Failure& failure, std::size_t offered, Run& run)
    REQUIRES(s.mu) {
  Held& failed = run.taken[offered - 1];
  const Member* member = retry_member(s, run);
  if (member == nullptr || member->name != failed.member ||
      !s.retry_run_front(failed.message->offset(), failure, failure.at)) {
    return false;
  }
  ++failed.attempt;
  restart_at_failed(s, *member, offered, run);
  return true;
}

/// After the first failure of a row in run, whose messages before taken[offered] were offered
/// (the failure applied): takes the failed message again as the first of a run that goes on
/// with the rest it took, if the failed message is what would be offered next anyway (R15).
/// Else false, with the run unchanged.
bool retake_failed(SubscriptionState& s, Time now, std::size_t offered, Run& run) REQUIRES(s.mu) {
  const Member* member = retry_member(s, run);
  if (member == nullptr) return false;
  Held& failed = run.taken[offered - 1];
  std::optional<Held> again = s.take_again(failed.message, member->name, now);
  if (!again) return false;
  failed = std::move(*again);
  restart_at_failed(s, *member, offered, run);
  return true;
}

}  // namespace

OfferRun offer_batch(const std::shared_ptr<SubscriptionState>& sp, int max,
                     const std::function<bool()>& may_go_on,
                     const std::function<void()>& on_progress) {
  SubscriptionState& s = *sp;
  // A group's members take turns message by message (R10): one offer at a time.
  // So does a subscription that saves each attempt before its handler runs (R34).
  if (s.config().group || s.config().durable_attempts) {
    return offer_run(sp, nullptr, max, may_go_on, on_progress);
  }
  // A call's first run takes one message, each run after a fully confirmed one twice as
  // many, up to kMaxRun, and the run after a failure half as many: a run a failure ends
  // gives back what it took after the failed message, so with frequent failures long runs
  // would take (and give back) mostly in vain.
  std::size_t size = 1;
  // Whether the last applied offer of this call was a confirmation: only then is a failure
  // the first of its row (R15), re-offered at once within the call. The row before the
  // call is the lane's to count.
  bool after_confirmation = false;
  OfferRun result;
  Run run;
  // One Delivery for the call: each message moves in for its handler call and back out, so
  // a call copies no reference count (an atomic on the segment's count, a cache line every
  // lane of the topic writes, twice per copy: the copy and its release).
  Delivery delivery{s.topic_name(), nullptr, 0};
  {
    const Time now = s.now();  // R24's waits; the clock is user code: never under a lock
    sync::MutexLock lock(s.mu);
    if (const std::optional<OfferResult> none = take_run(s, now, size, run)) {
      result.last = *none;
      return result;
    }
  }
  for (;;) {
    std::size_t offered = run.first;  // the index in run.taken of the next message to offer
    bool confirmed = true;
    bool cut = false;
    std::string reason;
    bool terminal = false;
    while (offered < run.taken.size()) {
      // Between offers, no lock: a stop, seek, pause, redrive or unsubscribe ends the run
      // before its next handler call.
      if (offered > run.first && (!may_go_on() || s.run_cuts() != run.cuts)) {
        cut = true;
        break;
      }
      Held& h = run.taken[offered++];
      ++result.offers;
      delivery.message = std::move(h.message);
      delivery.attempt = h.attempt;
      {
        FrameScope frame(s);
        sync::schedule_point();
        confirmed = call_handler(*run.handler, delivery, reason, terminal);
        sync::schedule_point();
      }
      h.message = std::move(delivery.message);  // call_handler does not throw
      if (!confirmed) break;
    }
    // One clock read per run: a confirmation needs none, a failure is stamped with it.
    const Time ended_at = s.now();  // the clock is user code: never under a lock
    const bool more = !cut && result.offers < max && may_go_on();
    if (more && confirmed && run.at_end) {
      // The run stopped short because nothing more was ready: the lane has caught up with
      // its publishers. Its next take waits a moment first (no lock held), so it finds a run
      // of messages where it would find one, and pulls the lines the publisher writes at
      // every append (the log's end, the record being written) to its core once per run
      // instead of once per message (BENCHMARKS.md, a lane on another CPU). A message
      // published meanwhile waits at most this long; a lane that
      // finds nothing at all does not wait here, nor one whose runs are short for another
      // reason (a returned message to offer first, a pause). The rest of a run a first
      // failure retook (below) keeps its at_end.
      for (int i = 0; i < kCaughtUpPauses; ++i) sync::spin_pause();
    }

    std::uint64_t saved = 0;
    bool took = false;
    {
      sync::MutexLock lock(s.mu);
      // A seek forgot every message of the run; an unsubscribe voids all their results.
      if (const std::optional<OfferResult> void_end = unapplied(s.offers.finish(run.ticket))) {
        result.last = *void_end;
        result.failed_in_a_row = result.last == OfferResult::kFailed ? 1 : 0;
        return result;
      }
      // Every offered message but the last was confirmed; the last is the run's result.
      // Nothing after a failure is ever confirmed: the rest goes back untouched.
      for (std::size_t i = run.first; i + 1 < offered; ++i) {
        s.confirm(run.taken[i].message->offset());
      }
      // A failure right after a confirmation (in this run or the one before) is the first of
      // its row: re-offered at once (R15), so the next run, which starts with it, is taken
      // here as after a confirmation. A second failure in a row ends the call: the lane
      // backs off. The failed message first, then what the run took after it: the order a
      // give-back and a new run would offer them in, without undoing and redoing the takes.
      const bool first_of_row = offered > run.first + 1 || after_confirmation;
      const std::size_t rest = run.taken.size() - offered;
      const bool may_go_on_with_rest =
          more && rest > 0 && static_cast<int>(rest) < max - result.offers;
      const Offset last = run.taken[offered - 1].message->offset();
      bool retried = false;  // failed and taken again in place
      if (confirmed) {
        result.last = s.confirm(last) ? OfferResult::kConfirmed : OfferResult::kFailed;
      } else {
        const Failure failure{reason, ended_at, terminal};
        retried = may_go_on_with_rest && first_of_row && retry_in_place(s, failure, offered, run);
        if (!retried) s.fail(last, failure);
        result.last = OfferResult::kFailed;
      }
      const bool failed = result.last == OfferResult::kFailed;
      const bool first_failure = failed && first_of_row;
      result.failed_in_a_row = !failed ? 0 : first_failure ? 1 : result.failed_in_a_row + 1;
      after_confirmation = !failed;
      const bool goes_on = retried || (may_go_on_with_rest && first_failure &&
                                       retake_failed(s, ended_at, offered, run));
      if (!goes_on && rest > 0) {
        s.give_back(run.marks[offered - 1], run.end,
                    std::span<const Held>(run.taken).subspan(offered));
      }
      saved = save_quietly(s);
      if (goes_on) {
        // run.at_end stays: the rest ends where the take found the end of what was
        // published, so a lane that caught up waits after it as after any run that did (a
        // failure does not make the lane spin on a log it already read to the end).
        took = true;
      } else if (more && (!failed || first_failure) && saved == 0) {
        // The next run is taken in the same critical section, as offer_run's next message.
        size = failed ? std::max<std::size_t>(size / 2, 1) : std::min(2 * size, kMaxRun);
        const auto left = static_cast<std::size_t>(max - result.offers);
        if (const std::optional<OfferResult> none =
                take_run(s, ended_at, std::min(size, left), run)) {
          result.next = *none;
        } else {
          took = true;
        }
      }
    }
    wait_quietly(s, saved);
    if (!took) return result;
    on_progress();  // the applied run; the caller reports the last one
  }
}

OfferResult offer_next(const std::shared_ptr<SubscriptionState>& sp, OfferWatch* watch) {
  static const std::function<bool()> never = [] { return false; };
  static const std::function<void()> nothing = [] {};
  return offer_run(sp, watch, 1, never, nothing).last;
}

std::optional<Millis> wait_recheck(SubscriptionState& s) {
  const Time now = s.now();
  std::optional<Time> end;
  {
    sync::MutexLock lock(s.mu);
    end = s.next_wait_end(now);
  }
  if (!end) return std::nullopt;
  return std::clamp(*end - now, Millis{1}, kWaitRecheck);
}

bool abandon_offer(SubscriptionState& s, std::uint64_t token) {
  const Failure timeout{"handler timeout", s.now()};
  std::uint64_t saved = 0;
  {
    sync::MutexLock lock(s.mu);
    if (!s.offers.abandon(token)) return false;
    // The running offer is the only push message in flight.
    for (Offset o : s.late(Time::max())) s.fail(o, timeout);
    saved = save_quietly(s);
  }
  wait_quietly(s, saved);
  return true;
}

void wait_for_offer_end(SubscriptionState& s, const std::string& member, WaitGraph& graph) {
  SubscriptionState* const mine = current_offer();
  sync::MutexLock lock(s.mu);
  if (!s.offers.running_for(member) || s.offers.running_here()) return;  // idle, or our own
  if (mine != nullptr && !graph.add(mine, &s)) return;  // the other handler waits for us
  s.offers.wait_until_idle(s.mu, member);
  if (mine != nullptr) graph.remove(mine);
}

}  // namespace broker
