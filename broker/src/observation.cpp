// BrokerImpl: what subscriptions report (SPEC R13).
#include <algorithm>
#include <tuple>

#include "broker_impl.h"

namespace broker {

SubscriptionStats BrokerImpl::stats(const std::string& topic, const std::string& name) const {
  const std::shared_ptr<Topic> t = find_any_topic(topic);
  if (!t->partitions.empty()) {
    // R29: the totals over the partitions, each read under its own lock in turn.
    SubscriptionStats total;
    total.paused = true;
    for (std::uint32_t p = 0; p < t->partitions.size(); ++p) {
      const SubscriptionStats s = stats(partition_name(topic, p), name);
      total.committed += s.committed;
      total.cursor += s.cursor;
      total.backlog += s.backlog;
      total.in_flight += s.in_flight;
      total.delivered += s.delivered;
      total.redelivered += s.redelivered;
      total.confirmed += s.confirmed;
      total.dead_lettered += s.dead_lettered;
      total.skipped += s.skipped;
      total.filtered += s.filtered;
      total.redriven += s.redriven;
      total.purged += s.purged;
      total.paused = total.paused && s.paused;
    }
    return total;
  }
  StatePtr s = find_state(topic, name);
  sync::MutexLock lock(s->mu);
  return s->stats();
}

std::vector<DeadLetter> BrokerImpl::dead_letters(const std::string& topic,
                                                 const std::string& name) const {
  StatePtr s = find_state(topic, name);
  sync::MutexLock lock(s->mu);
  // As stats does (and the model): what retention dropped is skipped now, so the next
  // commit saves the position past it (R3, R19).
  s->catch_up();
  return s->dead_letters();
}

std::vector<std::string> BrokerImpl::subscriptions(const std::string& topic) const {
  std::shared_ptr<Topic> t = find_topic(topic);
  sync::MutexLock lock(t->mu);
  std::vector<std::string> names;
  for (const auto& s : t->states()) {
    if (s->config().kind == Kind::kPull) {
      names.push_back(s->config().name);
      continue;
    }
    sync::MutexLock state_lock(s->mu);
    // A restarted push subscription or group nobody has resumed yet goes by its own name,
    // and so does a consumer group's partition subscription (R32).
    if (s->members.empty() || s->owner) {
      names.push_back(s->config().name);
      continue;
    }
    for (const auto& m : s->members.all()) names.push_back(m.name);
  }
  return names;
}

std::vector<WaitingSubscription> BrokerImpl::waiting_for_handler() const {
  std::vector<WaitingSubscription> out;
  for (const auto& t : topic_snapshot()) {
    sync::MutexLock lock(t->mu);
    if (t->is_deleted()) continue;
    for (const auto& s : t->states()) {
      if (s->config().kind == Kind::kPull) continue;
      sync::MutexLock state_lock(s->mu);
      // As subscriptions() tells them: no member and no consumer group keeping it.
      if (s->members.empty() && !s->owner) {
        out.push_back({t->name, s->config().name, s->config().group});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.topic, a.name) < std::tie(b.topic, b.name);
  });
  return out;
}

}  // namespace broker
