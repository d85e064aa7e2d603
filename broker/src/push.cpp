// BrokerImpl: push subscriptions, seek, drain and wait_idle (SPEC R4-R10, R12, R15).
#include <algorithm>
#include <utility>

#include "broker_impl.h"
#include "offer.h"

namespace broker {

namespace {

// R20: the options saved for the push subscription `name` waiting for a handler, or for
// the push group options.group, into options. Throws UnknownSubscription.
void take_saved_options(Topic& t, const std::string& name, PushOptions& options) REQUIRES(t.mu) {
  StatePtr s;
  if (options.group.empty()) {
    if (auto it = t.by_name.find(name); it != t.by_name.end()) s = it->second;
  } else if (auto it = t.groups.find(options.group); it != t.groups.end()) {
    s = it->second;
  }
  if (s) {
    sync::MutexLock lock(s->mu);
    const SubscriptionConfig& c = s->config();
    const bool waits = options.group.empty() ? !c.group && s->members.empty() && !s->owner
                                             : c.group;  // a push group, waiting or not
    if (c.kind == Kind::kPush && waits) {
      options.header_filter = c.header_filter;
      options.max_deliveries = c.max_deliveries;
      options.start = c.start;
      options.backoff = c.backoff;
      options.durable_attempts = c.durable_attempts;
      return;
    }
  }
  throw UnknownSubscription(options.group.empty()
                                ? "no push subscription '" + name + "' on '" + t.name +
                                      "' waits for a handler"
                                : "no push group '" + options.group + "' on '" + t.name + "'");
}

}  // namespace

void BrokerImpl::resubscribe(const WaitingSubscription& waiting, Handler handler,
                             const std::string& member) {
  if (waiting.group == member.empty()) {
    throw InvalidArgument(waiting.group ? "a push group resumes with a member's name"
                                        : "a push subscription resumes without a member's name");
  }
  PushOptions options;
  if (waiting.group) options.group = waiting.name;
  subscribe(waiting.topic, waiting.group ? member : waiting.name, std::move(handler),
            std::move(options), true);
}

void BrokerImpl::subscribe(const std::string& topic, const std::string& name, Handler handler,
                           PushOptions options, bool saved) {
  validate(name, handler, options);
  std::shared_ptr<Topic> t = find_topic(topic);
  Member member{name, std::make_shared<const Handler>(std::move(handler))};
  StatePtr state;
  StatePtr dormant;  // a restarted push subscription this subscribe resumes (R20)
  bool created = false;
  {
    sync::MutexLock lock(t->mu);
    if (t->is_deleted()) throw UnknownTopic("no topic '" + topic + "'");
    if (saved) take_saved_options(*t, name, options);
    if (auto it = t->by_name.find(name); it != t->by_name.end()) {
      const StatePtr& old = it->second;
      sync::MutexLock state_lock(old->mu);
      if (old->config().kind != Kind::kPush || old->config().group || !old->members.empty() ||
          old->owner || !options.group.empty()) {
        throw DuplicateSubscription("subscription '" + name + "' already exists on '" + topic +
                                    "'");
      }
      if (auto option = first_mismatch(old->config(), options)) {
        throw OptionsMismatch(*option,
                              "subscription '" + name + "' was saved with another " + *option);
      }
      // A fresh state takes the new handler and predicate where the saved one stood.
      dormant = old;
      state =
          make_state(*t, SubscriptionConfig::push(this, topic, name, options), old->committed());
      sync::MutexLock fresh_lock(state->mu);
      state->continue_from(*old);
      state->members.add(std::move(member));
      old->offers.close();
    }
    auto group = options.group.empty() ? t->groups.end() : t->groups.find(options.group);
    if (dormant) {
      t->replace(dormant, state);
    } else if (group != t->groups.end()) {
      state = group->second;
      if (auto option = first_mismatch(state->config(), options)) {
        throw OptionsMismatch(*option, "group '" + options.group + "' has another " + *option);
      }
      sync::MutexLock state_lock(state->mu);
      state->members.add(std::move(member));
    } else {
      const Offset cursor = resolve_start(*t->log, options.start);
      SubscriptionConfig config = SubscriptionConfig::push(this, topic, name, options);
      if (store_) store_->subscribed(topic, saved_of(config, cursor));  // may throw: no change
      state = make_state(*t, std::move(config), cursor);
      {
        sync::MutexLock state_lock(state->mu);
        state->members.add(std::move(member));
      }
      t->add(state);
      if (!options.group.empty()) t->groups[options.group] = state;
      created = true;
    }
    t->by_name[name] = state;
  }
  if (dormant) {
    dispatcher_->detach(dormant);
    dispatcher_->attach(state);
  }
  if (created) dispatcher_->attach(state);
  dispatcher_->notify(state);
}

bool BrokerImpl::unsubscribe(const std::string& topic, const std::string& name) {
  std::shared_ptr<Topic> t = find_topic(topic);
  StatePtr s;
  bool state_gone = false;
  bool wake = false;  // a poll_wait on it ends at once (UnknownSubscription, R11)
  {
    sync::MutexLock lock(t->mu);
    auto it = t->by_name.find(name);
    if (it != t->by_name.end()) {
      s = it->second;
    } else if (auto g = t->groups.find(name); g != t->groups.end()) {
      s = g->second;  // a restarted group nobody has joined yet (R20) can be removed by name
      sync::MutexLock state_lock(s->mu);
      if (!s->members.empty()) return false;
    } else {
      return false;
    }
    {
      sync::MutexLock state_lock(s->mu);
      if (s->owner) {
        throw WrongKind("'" + name + "' on '" + topic + "' is a consumer group's (R32)");
      }
      state_gone = s->config().kind == Kind::kPull || s->members.all().size() <= 1;
      if (state_gone && store_) store_->unsubscribed(topic, s->config().name);  // may throw
      s->members.remove(name);
      if (state_gone) {
        s->offers.close();  // from here on no offer can start (offer_next checks)
        s->cut_runs();      // nor does a lane's run go on to its next message
        wake = s->waiting_polls > 0;
      }
    }
    if (it != t->by_name.end()) t->by_name.erase(it);
    if (state_gone) t->remove(s);
  }
  if (wake) s->log()->wake_waiters();
  if (state_gone && s->config().kind == Kind::kPush) dispatcher_->detach(s);
  wait_for_offer_end(*s, state_gone ? std::string() : name, waits_);
  return true;
}

void BrokerImpl::seek(const std::string& topic, const std::string& name, Offset offset) {
  StatePtr s = find_state(topic, name);
  std::uint64_t saved = 0;
  bool wake = false;
  {
    sync::MutexLock lock(s->mu);
    const Offset oldest = s->log()->oldest();
    const Offset end = s->log()->end();
    if (offset < oldest || offset > end) {
      // R14: nothing changed, not even a catch-up (a commit after it would save the
      // caught-up position, and a restart would then not count the gap).
      throw OffsetOutOfRange("seek to " + std::to_string(offset) + " outside [" +
                             std::to_string(oldest) + ", " + std::to_string(end) + "]");
    }
    s->catch_up();  // what retention dropped before the old cursor moves is counted (R3)
    s->seek(offset);
    saved = s->save_position(true);  // a seek is durable when it returns (R19)
    wake = s->waiting_polls > 0;
  }
  if (wake) s->log()->wake_waiters();
  s->wait_saved(saved);
  if (s->config().kind == Kind::kPush) dispatcher_->notify(s);
}

std::size_t BrokerImpl::drain() {
  if (!dispatcher_->synchronous()) throw NotSynchronous("drain() needs the synchronous dispatcher");
  if (running_handler_of(this)) {
    throw ReentrantDrain("drain() called from inside a handler of this broker");
  }
  std::size_t confirmed = 0;
  for (const auto& t : topic_snapshot()) {
    // A copy: handlers may subscribe and unsubscribe while this drain walks it (R8).
    for (const auto& s : t->snapshot(Kind::kPush)) {
      for (;;) {
        const OfferResult r = offer_next(s, nullptr);
        // R33: an offer whose commit failed ends the drain with that failure; the offers
        // before it stand.
        check_storage();
        if (r == OfferResult::kConfirmed) {
          ++confirmed;
        } else if (r != OfferResult::kIgnored) {
          break;
        }
      }
    }
  }
  return confirmed;
}

void BrokerImpl::Progress::notify() {
  if (waiters.load(std::memory_order_acquire) == 0) return;
  sync::MutexLock lock(mu);
  cv.notify_all();
}

bool BrokerImpl::all_idle(bool backing_off_is_idle) const {
  // Idle: nothing can be offered now, so a returned message still waiting (R24) does not
  // count; delivered: it does.
  const std::optional<Time> now =
      backing_off_is_idle ? std::optional<Time>(clock_->now()) : std::nullopt;
  for (const auto& t : topic_snapshot()) {
    const std::shared_ptr<const StateList> push = t->push_states();  // alive for the loop
    for (const auto& s : *push) {
      sync::MutexLock lock(s->mu);
      if (!s->offers.open()) continue;
      if (s->offers.busy()) return false;
      if (backing_off_is_idle && (s->offers.backing_off() || s->paused())) continue;
      if (s->has_next(now)) return false;
    }
  }
  return true;
}

bool BrokerImpl::wait_idle(Millis timeout) { return wait_until_idle(timeout, true); }

bool BrokerImpl::wait_delivered(Millis timeout) { return wait_until_idle(timeout, false); }

bool BrokerImpl::wait_until_idle(Millis timeout, bool backing_off_is_idle) {
  if (dispatcher_->synchronous()) return all_idle(backing_off_is_idle);
  const Millis deadline = sync::steady_now() + timeout;
  progress_->waiters.fetch_add(1, std::memory_order_acq_rel);
  bool idle = false;
  for (;;) {
    if ((idle = all_idle(backing_off_is_idle))) break;
    const Millis now = sync::steady_now();
    if (now >= deadline) break;
    sync::MutexLock lock(progress_->mu);
    progress_->cv.wait_for(progress_->mu, std::min(deadline - now, Millis{5}));
  }
  progress_->waiters.fetch_sub(1, std::memory_order_acq_rel);
  return idle;
}

}  // namespace broker
