#include "broker_impl.h"

#include <algorithm>
#include <utility>

#include "mutant.h"
#include "offer.h"

namespace broker {
namespace {

// SPEC R4: resolves a start position against the log. Throws OffsetOutOfRange.
Offset resolve_start(const TopicLog& log, const StartPosition& start) {
  switch (start.kind) {
    case StartPosition::Kind::kEnd:
      return log.end();
    case StartPosition::Kind::kBeginning:
      return log.oldest();
    case StartPosition::Kind::kOffset:
      break;
  }
  if (start.offset < log.oldest() || start.offset > log.end()) {
    throw OffsetOutOfRange("start offset " + std::to_string(start.offset) + " outside [" +
                           std::to_string(log.oldest()) + ", " + std::to_string(log.end()) + "]");
  }
  return start.offset;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument(what);
}

std::unique_ptr<Dispatcher> make_dispatcher(const DispatcherOptions& o,
                                            std::function<void()> on_progress) {
  switch (o.kind) {
    case DispatcherOptions::Kind::kLane:
      return make_lane_dispatcher(o, std::move(on_progress));
    case DispatcherOptions::Kind::kPool:
      return make_pool_dispatcher(o, std::move(on_progress));
    case DispatcherOptions::Kind::kSynchronous:
      break;
  }
  return make_synchronous_dispatcher();
}

}  // namespace

BrokerImpl::BrokerImpl(BrokerOptions options)
    : clock_(options.clock ? options.clock : std::make_shared<SteadyClock>()),
      dispatcher_(
          make_dispatcher(options.dispatcher, [progress = progress_] { progress->notify(); })) {}

BrokerImpl::~BrokerImpl() { dispatcher_->stop(); }

// ---- topics ----

void BrokerImpl::create_topic(const std::string& name, TopicOptions options) {
  require(!name.empty(), "topic name must not be empty");
  sync::MutexLock lock(mu_);
  if (topics_.count(name)) throw DuplicateTopic("topic '" + name + "' already exists");
  auto topic = std::make_shared<Topic>(name, options);
  topics_[name] = topic;
  order_.push_back(std::move(topic));
}

void BrokerImpl::delete_topic(const std::string& name) {
  sync::MutexLock lock(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) throw UnknownTopic("no topic '" + name + "'");
  std::shared_ptr<Topic> topic = it->second;
  sync::MutexLock topic_lock(topic->mu);
  if (!topic->states.empty()) {
    throw TopicInUse("topic '" + name + "' still has " + std::to_string(topic->states.size()) +
                     " subscription(s)");
  }
  topic->deleted = true;
  topics_.erase(it);
  std::erase(order_, topic);
}

std::vector<std::string> BrokerImpl::topics() const {
  sync::MutexLock lock(mu_);
  std::vector<std::string> names;
  for (const auto& t : order_) names.push_back(t->name);
  return names;
}

std::shared_ptr<Topic> BrokerImpl::find_topic(const std::string& name) const {
  sync::MutexLock lock(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) throw UnknownTopic("no topic '" + name + "'");
  return it->second;
}

std::vector<std::shared_ptr<Topic>> BrokerImpl::topic_snapshot() const {
  sync::MutexLock lock(mu_);
  return order_;
}

Offset BrokerImpl::publish(const std::string& topic, std::string payload, Headers headers,
                           std::string key) {
  std::shared_ptr<Topic> t = find_topic(topic);
  const Offset offset =
      t->log->append(std::move(payload), std::move(headers), std::move(key), clock_->now());
  if (MUTANT(handlers_in_publish)) {  // the seed's weak design: publish runs every handler
    std::vector<std::shared_ptr<SubscriptionState>> states;
    {
      sync::MutexLock lock(t->mu);
      states = t->states;
    }
    for (const auto& s : states) {
      if (s->config().kind == Kind::kPush) {
        while (offer_next(s, nullptr) == OfferResult::kConfirmed) {
        }
      }
    }
  }
  if (!dispatcher_->synchronous()) {
    std::shared_ptr<const std::vector<std::shared_ptr<SubscriptionState>>> push;
    {
      sync::MutexLock lock(t->mu);
      push = t->push_states;
    }
    for (const auto& s : *push) dispatcher_->notify(s);  // wakes lanes; never runs a handler
  }
  return offset;
}

Offset BrokerImpl::end_offset(const std::string& topic) const {
  return find_topic(topic)->log->end();
}

Offset BrokerImpl::oldest_offset(const std::string& topic) const {
  return find_topic(topic)->log->oldest();
}

// ---- push ----

void BrokerImpl::subscribe(const std::string& topic, const std::string& name, Handler handler,
                           PushOptions options) {
  require(!name.empty(), "subscription name must not be empty");
  require(static_cast<bool>(handler), "handler must not be empty");
  require(options.max_deliveries >= 0, "max_deliveries must be >= 0");
  require(options.group.empty() || !options.filter, "a group takes no predicate");
  std::shared_ptr<Topic> t = find_topic(topic);
  Member member{name, std::make_shared<const Handler>(std::move(handler))};
  std::shared_ptr<SubscriptionState> state;
  bool created = false;
  {
    sync::MutexLock lock(t->mu);
    if (t->deleted) throw UnknownTopic("no topic '" + topic + "'");
    if (t->by_name.count(name)) {
      throw DuplicateSubscription("subscription '" + name + "' already exists on '" + topic + "'");
    }
    auto group = options.group.empty() ? t->groups.end() : t->groups.find(options.group);
    if (group != t->groups.end()) {
      state = group->second;
      const auto& c = state->config();
      if (c.header_filter != options.header_filter || c.max_deliveries != options.max_deliveries ||
          !(c.start == options.start)) {
        throw OptionsMismatch("group '" + options.group + "' has other options");
      }
      sync::MutexLock state_lock(state->mu);
      state->members.push_back(std::move(member));
    } else {
      const Offset cursor = resolve_start(*t->log, options.start);
      SubscriptionState::Config config;
      config.kind = Kind::kPush;
      config.topic = topic;
      config.name = options.group.empty() ? name : options.group;
      config.header_filter = options.header_filter;
      config.predicate = options.filter;
      config.max_deliveries = options.max_deliveries;
      config.start = options.start;
      config.group = !options.group.empty();
      state = std::make_shared<SubscriptionState>(std::move(config), t->log, cursor);
      {
        sync::MutexLock state_lock(state->mu);
        state->members.push_back(std::move(member));
      }
      t->states.push_back(state);
      t->refresh_push_states();
      if (!options.group.empty()) t->groups[options.group] = state;
      created = true;
    }
    t->by_name[name] = state;
  }
  if (created) dispatcher_->attach(state);
  dispatcher_->notify(state);
}

bool BrokerImpl::unsubscribe(const std::string& topic, const std::string& name) {
  std::shared_ptr<Topic> t;
  {
    sync::MutexLock lock(mu_);
    auto it = topics_.find(topic);
    if (it == topics_.end()) return false;
    t = it->second;
  }
  std::shared_ptr<SubscriptionState> s;
  bool state_gone = false;
  {
    sync::MutexLock lock(t->mu);
    auto it = t->by_name.find(name);
    if (it == t->by_name.end()) return false;
    s = it->second;
    t->by_name.erase(it);
    {
      sync::MutexLock state_lock(s->mu);
#if defined(BROKER_MUTANTS)
      std::optional<Member> gone;  // planted bug unsubscribe_one_more keeps its handler
      for (const Member& m : s->members) {
        if (m.name == name) gone = m;
      }
#endif
      std::erase_if(s->members, [&](const Member& m) { return m.name == name; });
      state_gone = s->config().kind == Kind::kPull || s->members.empty();
      if (state_gone) s->alive = false;  // from here on no offer can start (offer_next checks)
#if defined(BROKER_MUTANTS)
      if (state_gone && MUTANT(unsubscribe_one_more)) s->mutant_one_more = std::move(gone);
#endif
    }
    if (state_gone) {
      std::erase(t->states, s);
      if (s->config().kind == Kind::kPush) t->refresh_push_states();
      if (s->config().group) t->groups.erase(s->config().name);
    }
  }
  if (state_gone && s->config().kind == Kind::kPush) dispatcher_->detach(s);
  wait_for_offer_end(*s, state_gone ? std::string() : name, waits_);
  return true;
}

void BrokerImpl::seek(const std::string& topic, const std::string& name, Offset offset) {
  std::shared_ptr<SubscriptionState> s = find_state(topic, name);
  {
    sync::MutexLock lock(s->mu);
    s->catch_up();
    const Offset oldest = s->log()->oldest();
    const Offset end = s->log()->end();
    if (MUTANT(lock_order_inversion)) {  // takes the topic after the subscription
      std::shared_ptr<Topic> t = find_topic(topic);
      sync::MutexLock topic_lock(t->mu);
    }
    if (offset < oldest || offset > end + (MUTANT(seek_off_by_one) ? 1 : 0)) {
      throw OffsetOutOfRange("seek to " + std::to_string(offset) + " outside [" +
                             std::to_string(oldest) + ", " + std::to_string(end) + "]");
    }
    s->seek(offset);
  }
  if (s->config().kind == Kind::kPush) dispatcher_->notify(s);
}

std::size_t BrokerImpl::drain() {
  if (!dispatcher_->synchronous()) throw NotSynchronous("drain() needs the synchronous dispatcher");
  if (current_offer() != nullptr) throw ReentrantDrain("drain() called from inside a handler");
  std::size_t confirmed = 0;
  for (const auto& t : topic_snapshot()) {
    std::vector<std::shared_ptr<SubscriptionState>> states;
    {
      sync::MutexLock lock(t->mu);
      if (t->deleted) continue;
      for (const auto& s : t->states) {
        if (s->config().kind == Kind::kPush) states.push_back(s);
      }
    }
    if (MUTANT(live_list_iteration)) {  // walks the live list by index: a removal skips one
      for (std::size_t i = 0;; ++i) {
        std::shared_ptr<SubscriptionState> s;
        {
          sync::MutexLock lock(t->mu);
          if (i >= t->states.size()) break;
          s = t->states[i];
        }
        if (s->config().kind != Kind::kPush) continue;
        for (OfferResult r; (r = offer_next(s, nullptr)) == OfferResult::kConfirmed ||
                            r == OfferResult::kIgnored;) {
          if (r == OfferResult::kConfirmed) ++confirmed;
        }
      }
      continue;
    }
    for (const auto& s : states) {
      for (;;) {
        const OfferResult r = offer_next(s, nullptr);
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

bool BrokerImpl::all_idle() const {
  for (const auto& t : topic_snapshot()) {
    std::shared_ptr<const std::vector<std::shared_ptr<SubscriptionState>>> push;
    {
      sync::MutexLock lock(t->mu);
      push = t->push_states;
    }
    for (const auto& s : *push) {
      sync::MutexLock lock(s->mu);
      if (!s->alive) continue;
      if (s->delivering != nullptr) return false;
      if (!s->backing_off && s->has_next()) return false;
    }
  }
  return true;
}

bool BrokerImpl::wait_idle(Millis timeout) {
  if (dispatcher_->synchronous()) return all_idle();
  const Millis deadline = sync::steady_now() + timeout;
  progress_->waiters.fetch_add(1, std::memory_order_acq_rel);
  bool idle = false;
  for (;;) {
    if ((idle = all_idle())) break;
    const Millis now = sync::steady_now();
    if (now >= deadline) break;
    sync::MutexLock lock(progress_->mu);
    progress_->cv.wait_for(progress_->mu, std::min(deadline - now, Millis{5}));
  }
  progress_->waiters.fetch_sub(1, std::memory_order_acq_rel);
  return idle;
}

// ---- pull ----

void BrokerImpl::subscribe_pull(const std::string& topic, const std::string& name,
                                PullOptions options) {
  require(!name.empty(), "subscription name must not be empty");
  require(options.ack_timeout.count() > 0, "ack_timeout must be > 0");
  require(options.max_deliveries >= 0, "max_deliveries must be >= 0");
  std::shared_ptr<Topic> t = find_topic(topic);
  sync::MutexLock lock(t->mu);
  if (t->deleted) throw UnknownTopic("no topic '" + topic + "'");
  auto it = t->by_name.find(name);
  if (it != t->by_name.end()) {
    const auto& c = it->second->config();
    if (c.kind != Kind::kPull) throw WrongKind("'" + name + "' is a push subscription");
    if (c.header_filter != options.header_filter || c.ack_timeout != options.ack_timeout ||
        c.max_deliveries != options.max_deliveries || !(c.start == options.start)) {
      throw OptionsMismatch("pull subscription '" + name + "' exists with other options");
    }
    return;
  }
  const Offset cursor = resolve_start(*t->log, options.start);
  SubscriptionState::Config config;
  config.kind = Kind::kPull;
  config.topic = topic;
  config.name = name;
  config.header_filter = options.header_filter;
  config.max_deliveries = options.max_deliveries;
  config.ack_timeout = options.ack_timeout;
  config.start = options.start;
  auto state = std::make_shared<SubscriptionState>(std::move(config), t->log, cursor);
  t->states.push_back(state);
  t->by_name[name] = std::move(state);
}

std::shared_ptr<SubscriptionState> BrokerImpl::find_state(const std::string& topic,
                                                          const std::string& name) const {
  std::shared_ptr<Topic> t = find_topic(topic);
  sync::MutexLock lock(t->mu);
  auto it = t->by_name.find(name);
  if (it == t->by_name.end()) {
    throw UnknownSubscription("no subscription '" + name + "' on '" + topic + "'");
  }
  return it->second;
}

std::shared_ptr<SubscriptionState> BrokerImpl::pull_state(const std::string& topic,
                                                          const std::string& name) const {
  std::shared_ptr<SubscriptionState> s = find_state(topic, name);
  if (s->config().kind != Kind::kPull) throw WrongKind("'" + name + "' is a push subscription");
  return s;
}

std::vector<Received> BrokerImpl::poll(const std::string& topic, const std::string& sub,
                                       const std::string& member, Time now,
                                       std::size_t max_messages) {
  require(max_messages > 0, "max_messages must be > 0");
  require(!member.empty(), "member must not be empty");
  std::shared_ptr<SubscriptionState> s = pull_state(topic, sub);
  std::vector<Received> out;
  if (MUTANT(inflight_no_lock)) return poll_unlocked(*s, member, now, max_messages);
  sync::MutexLock lock(s->mu);
  while (out.size() < max_messages) {
    std::optional<Held> held = s->take_next(member, now + s->config().ack_timeout);
    if (!held) break;
    out.push_back(Received{held->message, held->attempt, held->deadline});
  }
  return out;
}

// Planted bug inflight_no_lock: poll without the subscription's lock.
std::vector<Received> BrokerImpl::poll_unlocked(SubscriptionState& s, const std::string& member,
                                                Time now, std::size_t max_messages)
    NO_THREAD_SAFETY_ANALYSIS {
  std::vector<Received> out;
  while (out.size() < max_messages) {
    std::optional<Held> held = s.take_next(member, now + s.config().ack_timeout);
    if (!held) break;
    out.push_back(Received{held->message, held->attempt, held->deadline});
  }
  return out;
}

std::vector<Received> BrokerImpl::poll_wait(const std::string& topic, const std::string& sub,
                                            const std::string& member, std::size_t max_messages,
                                            Millis timeout) {
  const Millis deadline = sync::steady_now() + timeout;
  const std::shared_ptr<TopicLog> log = find_topic(topic)->log;  // poll re-checks the topic
  for (;;) {
    const Offset seen = log->end();
    std::vector<Received> got = poll(topic, sub, member, clock_->now(), max_messages);
    const Millis now = sync::steady_now();
    if (!got.empty() || now >= deadline) return got;
    // Returned messages do not grow the log, so wake up now and then to look for them.
    log->wait_for_growth(seen, std::min(deadline - now, Millis{10}));
  }
}

bool BrokerImpl::ack(const std::string& topic, const std::string& sub, Offset offset,
                     const std::string& member, Time now) {
  std::shared_ptr<SubscriptionState> s = pull_state(topic, sub);
  sync::MutexLock lock(s->mu);
  if (s->held_by(offset, member, now) == nullptr) return false;
  return s->confirm(offset);
}

bool BrokerImpl::nack(const std::string& topic, const std::string& sub, Offset offset,
                      const std::string& member, Time now) {
  std::shared_ptr<SubscriptionState> s = pull_state(topic, sub);
  sync::MutexLock lock(s->mu);
  if (s->held_by(offset, member, now) == nullptr) return false;
  s->fail(offset, Failure{"nacked"});
  return true;
}

bool BrokerImpl::extend(const std::string& topic, const std::string& sub, Offset offset,
                        const std::string& member, Time now, Millis extension) {
  require(extension.count() > 0, "extension must be > 0");
  std::shared_ptr<SubscriptionState> s = pull_state(topic, sub);
  sync::MutexLock lock(s->mu);
  Held* held = s->held_by(offset, member, now);
  if (held == nullptr) return false;
  held->deadline = now + extension;
  return true;
}

std::vector<Expired> BrokerImpl::expire(Time now) {
  std::vector<Expired> out;
  for (const auto& t : topic_snapshot()) {
    std::vector<std::shared_ptr<SubscriptionState>> states;
    {
      sync::MutexLock lock(t->mu);
      states = t->states;
    }
    for (const auto& s : states) {
      if (s->config().kind != Kind::kPull) continue;
      sync::MutexLock lock(s->mu);
      if (!s->alive) continue;
      s->catch_up();
      for (Offset o : s->late(now)) {
        const bool dead = s->fail(o, Failure{"ack deadline expired"});
        out.push_back(Expired{t->name, s->config().name, o, dead});
      }
    }
  }
  return out;
}

// ---- observation ----

SubscriptionStats BrokerImpl::stats(const std::string& topic, const std::string& name) const {
  std::shared_ptr<SubscriptionState> s = find_state(topic, name);
  sync::MutexLock lock(s->mu);
  return s->stats();
}

std::vector<DeadLetter> BrokerImpl::dead_letters(const std::string& topic,
                                                 const std::string& name) const {
  std::shared_ptr<SubscriptionState> s = find_state(topic, name);
  sync::MutexLock lock(s->mu);
  return s->dead_letters();
}

std::vector<std::string> BrokerImpl::subscriptions(const std::string& topic) const {
  std::shared_ptr<Topic> t = find_topic(topic);
  sync::MutexLock lock(t->mu);
  std::vector<std::string> names;
  for (const auto& s : t->states) {
    if (s->config().kind == Kind::kPull) {
      names.push_back(s->config().name);
      continue;
    }
    sync::MutexLock state_lock(s->mu);
    for (const auto& m : s->members) names.push_back(m.name);
  }
  return names;
}

}  // namespace broker
