// BrokerImpl: what subscriptions report (SPEC R13).
#include "broker_impl.h"

namespace broker {

SubscriptionStats BrokerImpl::stats(const std::string& topic, const std::string& name) const {
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

}  // namespace broker
