// One push offer: take the next message, call the handler outside every lock, apply the
// result. The only place broker code calls a push handler or begins and ends an offer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "subscription_state.h"
#include "wait_graph.h"

namespace broker {

/// What one offer did.
enum class OfferResult {
  kConfirmed,  // the handler confirmed and the result was applied
  kFailed,     // the handler failed (or the offer was abandoned on timeout)
  kIgnored,    // the subscription was seeked during the offer: its result is void
  kNothing,    // nothing to offer
  kGone,       // the subscription no longer exists
  kBusy,       // another context is running an offer for it
};

/// Lets a threaded dispatcher watch an offer (for handler timeouts).
class OfferWatch {
 public:
  virtual ~OfferWatch() = default;
  /// Called after the offer is committed, before the handler runs. No lock held.
  virtual void started(const std::shared_ptr<SubscriptionState>& s, std::uint64_t token) = 0;
  /// Called after the handler returned. No lock held.
  virtual void ended() = 0;
};

/// Offers the next message of a push subscription. Locks s.mu twice, briefly; never holds
/// a lock while the handler runs. Never throws (handler exceptions are failures).
OfferResult offer_next(const std::shared_ptr<SubscriptionState>& s, OfferWatch* watch);

/// What a run of offers did: how many handler calls it made, the result of the last one
/// (or what ended the run before the first: kNothing, kGone, kBusy), and, if the run
/// ended because nothing could be taken after a confirmation, why (kNothing etc.).
struct OfferRun {
  int offers = 0;
  OfferResult last = OfferResult::kNothing;
  std::optional<OfferResult> next;
  // The failures in a row that ended the call (0 unless last is kFailed): offers - this
  // many offers before them, if any, end with a confirmation.
  int failed_in_a_row = 0;
};

/// Offers up to max messages of a push subscription one at a time, each exactly as
/// offer_next (R8: one handler call at a time, in R5's order), but after a confirmed one
/// the result is applied and the next message taken in one critical section of s.mu (a
/// batch: one lock per message instead of two). Stops after the first offer that was not
/// confirmed, when nothing is left, or when may_go_on (asked after each handler returned,
/// before the lock; no lock held) says no. on_progress runs after each applied offer but
/// the last (no lock held). Never throws (handler exceptions are failures).
OfferRun offer_run(const std::shared_ptr<SubscriptionState>& s, OfferWatch* watch, int max,
                   const std::function<bool()>& may_go_on,
                   const std::function<void()>& on_progress);

/// The most messages a lane's run takes (R15).
inline constexpr std::size_t kMaxRun = 64;
/// How many sync::spin_pause()s a lane waits after a run that found the end of what was
/// published (offer_batch): under a microsecond of CPU pauses; nothing on the fiber
/// back-end.
inline constexpr int kCaughtUpPauses = 4;

/// Offers up to max messages of a push subscription as a lane does (R15's runs): takes a
/// run of ready messages from the cursor in one critical section of s.mu (they count as
/// delivered and held from then on; the first run of a call takes one, each after a fully
/// confirmed run twice as many, up to kMaxRun), calls the handler for them one at a time in
/// offset order, and applies their results in one critical section when the run ends: after its
/// last message, after a failure (the confirmations before it apply, the failure applies,
/// and the messages after it were never offered: they go back as if never taken; a failure
/// right after a confirmation of this call is the first of its row and the call goes on,
/// R15: with the failed message again and the rest, kept, if SubscriptionState::take_again
/// allows, else with a run half as long; any other failure ends the call), or when
/// may_go_on (asked between handler calls and after the last; no lock held) says no or a
/// seek, pause, redrive or unsubscribe cut it (SubscriptionState::run_cuts). The next run
/// is taken in the same critical section as the last one's results. A group's members
/// take turns (R10): for a group it is offer_run. on_progress as offer_run. Never throws.
OfferRun offer_batch(const std::shared_ptr<SubscriptionState>& s, int max,
                     const std::function<bool()>& may_go_on,
                     const std::function<void()>& on_progress);

/// SPEC R24 for threaded dispatchers: after an offer found nothing, how long (real time) to
/// sleep before looking again because a returned message waits out its back-off: its wait's
/// end on the injected clock, at most kWaitRecheck (the clock may be a test's, moved by
/// hand); none if nothing waits. Reads the clock, then locks s.mu.
std::optional<Millis> wait_recheck(SubscriptionState& s);
inline constexpr Millis kWaitRecheck{10};

/// Fails the running offer identified by token (handler timeout), so the subscription can
/// go on and unsubscribe need not wait. Locks s.mu. Returns whether it abandoned it.
bool abandon_offer(SubscriptionState& s, std::uint64_t token);

/// SPEC R9: after s was unsubscribed (or member removed from it), waits until no offer to
/// it (to that member, if non-empty) runs on another context, unless the wait would close
/// a cycle of handlers waiting for each other. Locks s.mu, then graph (leaf).
void wait_for_offer_end(SubscriptionState& s, const std::string& member, WaitGraph& graph);

/// SPEC R19 for dispatcher threads, which have nobody to throw to: save_position of s
/// (REQUIRES s.mu), and its wait (without s.mu). A failed write or sync is left to the next
/// commit of s, which saves the position again.
std::uint64_t save_quietly(SubscriptionState& s) REQUIRES(s.mu);
void wait_quietly(SubscriptionState& s, std::uint64_t ticket) EXCLUDES(s.mu);

/// The subscription whose handler runs innermost on this context, or null.
SubscriptionState* current_offer();

/// Whether a handler of broker runs on this context (at any depth: a handler of another
/// broker may be running inside it, or it inside one of another broker).
bool running_handler_of(const BrokerImpl* broker);

}  // namespace broker
