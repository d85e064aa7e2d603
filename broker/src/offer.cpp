#include "offer.h"

#include <exception>
#include <string>

#include "mutant.h"

namespace broker {
namespace {

void* this_context() { return &sync::context_slot(); }

// Planted bug handler_under_lock: user code runs while the subscription's lock is held.
bool call_under_lock(SubscriptionState& s, const Handler& handler, const Delivery& d)
    NO_THREAD_SAFETY_ANALYSIS {
  s.mu.lock();
  struct Unlock {
    SubscriptionState& s;
    ~Unlock() NO_THREAD_SAFETY_ANALYSIS { s.mu.unlock(); }
  } unlock{s};
  return handler(d);
}

// Planted bug unsubscribe_one_more: after unsubscribe returned, one more offer may start.
bool one_more_offer(SubscriptionState& s) REQUIRES(s.mu) {
#if defined(BROKER_MUTANTS)
  if (!s.mutant_one_more) return false;
  s.members.push_back(std::move(*s.mutant_one_more));  // its handler is called once more
  s.mutant_one_more.reset();
  return true;
#else
  static_cast<void>(s);
  return false;
#endif
}

}  // namespace

SubscriptionState* current_offer() {
  return static_cast<SubscriptionState*>(sync::context_slot());
}

OfferResult offer_next(const std::shared_ptr<SubscriptionState>& sp, OfferWatch* watch) {
  SubscriptionState& s = *sp;
  std::shared_ptr<const Handler> handler;
  Held held;
  std::uint64_t token = 0;
  std::uint64_t epoch = 0;
  {
    sync::MutexLock lock(s.mu);
    if (!s.alive && !one_more_offer(s)) return OfferResult::kGone;
    if (s.delivering != nullptr && !MUTANT(two_pool_tasks)) return OfferResult::kBusy;
    const Member* member = s.next_member();
    if (member == nullptr) return OfferResult::kGone;
    std::optional<Held> next = s.take_next(member->name, Time::max());
    if (!next) return OfferResult::kNothing;
    held = std::move(*next);
    handler = member->handler;
    s.last_member = member->name;
    // Committing the offer and marking it running is one step under s.mu, so an
    // unsubscribe either sees it running (and waits) or wins before it is taken.
    s.delivering = this_context();
    s.delivering_member = member->name;
    token = ++s.offer_token;
    epoch = s.epoch;
  }
  if (watch != nullptr) watch->started(sp, token);
  void* const saved = sync::context_slot();
  sync::context_slot() = &s;
  Failure failure;
  bool confirmed = false;
  sync::schedule_point();
  try {
    confirmed = MUTANT(handler_under_lock)
                    ? call_under_lock(s, *handler, Delivery{s.config().topic, *held.message, held.attempt})
                    : (*handler)(Delivery{s.config().topic, *held.message, held.attempt});
    if (!confirmed) failure.reason = "rejected";
  } catch (const std::exception& e) {
    failure.reason = std::string("exception: ") + e.what();
  } catch (...) {
    failure.reason = "unknown exception";
  }
  sync::schedule_point();
  sync::context_slot() = saved;
  if (watch != nullptr) watch->ended();

  sync::MutexLock lock(s.mu);
  if (s.delivering == nullptr || s.offer_token != token) return OfferResult::kFailed;
  s.delivering = nullptr;
  s.offer_done.notify_all();
  if (!s.alive) return OfferResult::kGone;
  if (s.epoch != epoch) return OfferResult::kIgnored;
  const Offset offset = held.message->offset;
  if (confirmed && s.confirm(offset)) return OfferResult::kConfirmed;
  if (!confirmed) s.fail(offset, failure);
  return OfferResult::kFailed;
}

bool abandon_offer(SubscriptionState& s, std::uint64_t token) {
  sync::MutexLock lock(s.mu);
  if (s.delivering == nullptr || s.offer_token != token) return false;
  s.delivering = nullptr;
  s.offer_done.notify_all();
  // The running offer is the only push message in flight.
  for (Offset o : s.late(Time::max())) s.fail(o, Failure{"handler timeout"});
  return true;
}

void wait_for_offer_end(SubscriptionState& s, const std::string& member, WaitGraph& graph) {
  if (MUTANT(unsubscribe_window)) return;  // the seed's design: flag set, nobody waits
  SubscriptionState* const mine = current_offer();
  sync::MutexLock lock(s.mu);
  auto running = [&]() REQUIRES(s.mu) {
    return s.delivering != nullptr && (member.empty() || s.delivering_member == member);
  };
  if (!running() || s.delivering == this_context()) return;  // idle, or our own handler
  if (mine != nullptr && !graph.add(mine, &s)) return;  // the other handler waits for us
  while (running()) s.offer_done.wait(s.mu);
  if (mine != nullptr) graph.remove(mine);
}

}  // namespace broker
