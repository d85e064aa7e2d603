// BrokerImpl: pull subscriptions, poll, ack, nack, extend and expire (SPEC R11).
#include <algorithm>
#include <optional>
#include <utility>

#include "broker_impl.h"

namespace broker {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument(what);
}

/// poll's and poll_wait's argument checks, first of all their checks (R14 precedence).
void check_poll_arguments(const std::string& member, std::size_t max_messages) {
  require(max_messages > 0, "max_messages must be > 0");
  require(!member.empty(), "member must not be empty");
}

/// Counts a poll_wait on s for its whole call (SubscriptionState::waiting_polls). Locks s.mu.
class CountedWait {
 public:
  explicit CountedWait(StatePtr s) : s_(std::move(s)) {
    sync::MutexLock lock(s_->mu);
    ++s_->waiting_polls;
  }
  ~CountedWait() {
    sync::MutexLock lock(s_->mu);
    --s_->waiting_polls;
  }
  CountedWait(const CountedWait&) = delete;
  CountedWait& operator=(const CountedWait&) = delete;
  /// The state counted.
  [[nodiscard]] const StatePtr& state() const { return s_; }

 private:
  const StatePtr s_;
};

/// Whether a confirmation (ack, term) may make a message ready: it frees a place under
/// max_in_flight (R22) or its key (R31). Otherwise what was ready stays as it was.
bool frees_a_place(const SubscriptionConfig& c) { return c.max_in_flight > 0 || c.ordered_by_key; }

}  // namespace

void BrokerImpl::subscribe_pull(const std::string& topic, const std::string& name,
                                PullOptions options) {
  validate(name, options);
  std::shared_ptr<Topic> t = find_topic(topic);
  sync::MutexLock lock(t->mu);
  if (t->is_deleted()) throw UnknownTopic("no topic '" + topic + "'");
  auto it = t->by_name.find(name);
  if (it != t->by_name.end()) {
    const SubscriptionConfig& c = it->second->config();
    if (c.kind != Kind::kPull) throw WrongKind("'" + name + "' is a push subscription");
    if (auto option = first_mismatch(c, options)) {
      throw OptionsMismatch(*option,
                            "pull subscription '" + name + "' exists with another " + *option);
    }
    return;
  }
  const Offset cursor = resolve_start(*t->log, options.start);
  SubscriptionConfig config = SubscriptionConfig::pull(this, topic, name, options);
  if (store_) store_->subscribed(topic, saved_of(config, cursor));  // may throw: nothing changed
  StatePtr state = make_state(*t, std::move(config), cursor);
  t->add(state);
  t->by_name[name] = std::move(state);
}

StatePtr BrokerImpl::find_state(const std::string& topic, const std::string& name) const {
  std::shared_ptr<Topic> t = find_topic(topic);
  sync::MutexLock lock(t->mu);
  StatePtr s = t->resolve(name);
  if (!s) throw UnknownSubscription("no subscription '" + name + "' on '" + topic + "'");
  return s;
}

StatePtr BrokerImpl::pull_state(const std::string& topic, const std::string& name) const {
  StatePtr s = find_state(topic, name);
  if (s->config().kind != Kind::kPull) throw WrongKind("'" + name + "' is a push subscription");
  return s;
}

std::vector<Received> BrokerImpl::poll(const std::string& topic, const std::string& sub,
                                       const std::string& member, std::size_t max_messages,
                                       Time now) {
  check_poll_arguments(member, max_messages);
  StatePtr s = pull_state(topic, sub);
  std::vector<Received> out;
  const Time deadline = now + s->config().ack_timeout;
  std::uint64_t saved = 0;
  {
    sync::MutexLock lock(s->mu);
    if (s->owner) {
      throw WrongKind("'" + sub + "' on '" + topic + "' is a consumer group's: poll_group it");
    }
    s->catch_up();  // also when paused or full (R26, R22), as the model does
    const std::size_t bound = s->config().max_in_flight;
    while (out.size() < max_messages && (bound == 0 || s->held_count() < bound)) {
      std::optional<Held> held = s->take_next(member, deadline, now);
      if (!held) break;
      const Offset offset = held->message->offset();
      out.push_back(Received{std::move(held->message), held->attempt, held->deadline,
                             Receipt{topic, sub, member, offset}});
    }
    // Filtered and skipped messages move the position too; R34 saves what it hands out.
    saved = s->save_position(s->config().durable_attempts && !out.empty());
  }
  s->wait_saved(saved);
  if (expiry_ && !out.empty()) expiry_->arm(deadline);
  return out;
}

std::vector<Received> BrokerImpl::poll_wait(const std::string& topic, const std::string& sub,
                                            const std::string& member, std::size_t max_messages,
                                            Millis timeout) {
  check_poll_arguments(member, max_messages);
  const Millis deadline = sync::steady_now() + timeout;
  StatePtr s = pull_state(topic, sub);  // poll re-checks
  const std::shared_ptr<TopicLog> log = s->log();
  std::vector<Received> got = poll(topic, sub, member, max_messages, clock_->now());
  if (!got.empty() || sync::steady_now() >= deadline) return got;
  // Nothing ready: counted from here (see waiting_polls), so every look below comes after
  // the count, and a change after a look wakes the wait that follows it. Counted on the
  // subscription the name finds at each look: one unsubscribed and made again while this
  // waits is a new state, and only a wait counted on it is woken by its unsubscribe.
  std::optional<CountedWait> counted;
  counted.emplace(std::move(s));
  for (;;) {
    if (StatePtr current = pull_state(topic, sub); current != counted->state()) {
      counted.emplace(std::move(current));
    }
    const std::uint64_t wakes = log->wakes();  // before the poll: a wake after it counts
    const Offset seen = log->end();
    got = poll(topic, sub, member, max_messages, clock_->now());
    const Millis now = sync::steady_now();
    if (!got.empty() || now >= deadline) return got;
    // Appends and hand-backs wake this wait. A retry held back by a back-off or a nack's
    // delay becomes ready by time alone, with nobody to wake it: look again every 10 ms.
    log->wait_for_growth(seen, wakes, std::min(deadline - now, Millis{10}));
  }
}

AckResult BrokerImpl::ack(const Receipt& r, Time now) {
  StatePtr s = pull_state(r.topic, r.subscription);
  AckOutcome why = AckOutcome::kAccepted;
  std::uint64_t saved = 0;
  bool wake = false;
  {
    sync::MutexLock lock(s->mu);
    if (s->answerable(r, now, why) == nullptr) return AckResult{why};
    s->confirm(r.offset);
    saved = s->save_position();
    wake = s->waiting_polls > 0 && frees_a_place(s->config());
  }
  if (wake) s->log()->wake_waiters();
  s->wait_saved(saved);  // under commit_sync always: the ack returns once its commit is durable
  return AckResult{};
}

AckResult BrokerImpl::nack(const Receipt& r, Time now, std::optional<Millis> delay) {
  if (delay) {
    require(delay->count() >= 0, "delay must be >= 0");
    require(*delay <= kMaxDuration, "delay must be <= kMaxDuration");
  }
  StatePtr s = pull_state(r.topic, r.subscription);
  AckOutcome why = AckOutcome::kAccepted;
  std::uint64_t saved = 0;
  bool wake = false;
  {
    sync::MutexLock lock(s->mu);
    if (s->answerable(r, now, why) == nullptr) return AckResult{why};
    s->fail(r.offset, Failure{"nacked", now, false, delay});
    saved = s->save_position();  // a dead letter moves the position
    wake = s->waiting_polls > 0;
  }
  if (wake) s->log()->wake_waiters();
  s->wait_saved(saved);
  return AckResult{};
}

AckResult BrokerImpl::term(const Receipt& r, Time now) {
  StatePtr s = pull_state(r.topic, r.subscription);
  AckOutcome why = AckOutcome::kAccepted;
  std::uint64_t saved = 0;
  bool wake = false;
  {
    sync::MutexLock lock(s->mu);
    if (s->answerable(r, now, why) == nullptr) return AckResult{why};
    s->fail(r.offset, Failure{"terminated", now, /*terminal=*/true});
    saved = s->save_position();  // the dead letter moves the position
    wake = s->waiting_polls > 0 && frees_a_place(s->config());
  }
  if (wake) s->log()->wake_waiters();
  s->wait_saved(saved);
  return AckResult{};
}

AckResult BrokerImpl::extend(const Receipt& r, Time now, Millis extension) {
  require(extension.count() > 0, "extension must be > 0");
  require(extension <= kMaxDuration, "extension must be <= kMaxDuration");
  StatePtr s = pull_state(r.topic, r.subscription);
  AckOutcome why = AckOutcome::kAccepted;
  {
    sync::MutexLock lock(s->mu);
    Held* held = s->answerable(r, now, why);
    if (held == nullptr) return AckResult{why};
    held->deadline = now + extension;
  }
  if (expiry_) expiry_->arm(now + extension);
  return AckResult{};
}

std::vector<Expired> BrokerImpl::expire(Time now) {
  std::optional<Time> next;
  return expire(now, next);
}

std::vector<Expired> BrokerImpl::expire(Time now, std::optional<Time>& next) {
  std::vector<Expired> out;
  next.reset();
  for (const auto& t : topic_snapshot()) {
    for (const auto& s : t->snapshot(Kind::kPull)) {
      std::uint64_t saved = 0;
      bool wake = false;
      {
        sync::MutexLock lock(s->mu);
        if (!s->offers.open()) continue;
        s->catch_up();
        for (Offset o : s->late(now)) {
          const bool dead = s->fail(o, Failure{"ack deadline expired", now});
          out.push_back(Expired{t->name, s->config().name, o, dead});
          wake = s->waiting_polls > 0;
        }
        saved = s->save_position();
        const std::optional<Time> held = s->earliest_deadline();
        if (held && *held != Time::max() && (!next || *held < *next)) next = held;
      }
      if (wake) s->log()->wake_waiters();
      s->wait_saved(saved);
    }
  }
  return out;
}

}  // namespace broker
