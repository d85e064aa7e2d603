// Durability: what a durable broker saves and what a restart gives back (R19, R20).
#include <algorithm>
#include <iterator>

#include "model/model.h"

namespace model {

// R19: a commit when the committed position moved or a message died since the last one
// (or always, for seek).
void Model::save(Sub& s, bool force) {
  const Offset position = committed(s);
  if (!force && position == s.saved.position && s.dead.size() == s.saved.dead.size()) return;
  s.saved = Sub::Saved{position, s.attempts, s.dead};
}

// R20: every state resumes from its last save; nothing is held or returned; counters
// restart at zero; push handlers are gone (their states wait for subscribe to resume).
// R29: keyless publishes start again at partition 0 (the turn is not saved). R32: consumer
// groups are gone until members join again; their partition subscriptions stay.
void Model::restart() {
  for (Topic& t : topics_) {
    t.round_robin = 0;
    t.members.clear();
    t.consumer_groups.clear();  // R32: members join again
    t.consumer_pushes.clear();  // (their states wait below, dormant, for the first join)
    for (auto& [id, s] : t.subs) {
      s.owner.reset();
      s.cursor = std::min(s.saved.position, t.end);
      s.redelivery.clear();
      s.in_flight.clear();
      s.attempts = s.saved.attempts;
      s.dead = s.saved.dead;
      s.paused = false;
      s.counters = Stats{};
      s.members.clear();
      s.last_member.clear();
      if (!s.pull && s.group.empty()) t.dormant[s.name] = id;
    }
  }
  calls_.clear();
  storage_failed_ = false;  // R33: the reopened broker has decided the failed call
}

void Model::lose_tail(const std::string& topic, Offset end, Offset oldest) {
  Topic& t = topic_or_throw(topic);
  if (end >= t.end) return;
  t.log.erase(t.log.lower_bound(end), t.log.end());
  t.dropped.erase(t.dropped.lower_bound(end), t.dropped.end());
  while (!t.dropped.empty() && t.dropped.rbegin()->first >= oldest)
    t.log.insert(t.dropped.extract(std::prev(t.dropped.end())));
  apply_retention(t);  // what recovery keeps is within retention, as at every publish
  t.end = end;
  for (auto& [id, s] : t.subs) {
    s.saved.position = std::min(s.saved.position, end);
    s.cursor = std::min(s.cursor, end);
    for (auto* attempts : {&s.attempts, &s.saved.attempts})
      attempts->erase(attempts->lower_bound(end), attempts->end());
    for (auto* dead : {&s.dead, &s.saved.dead})
      std::erase_if(*dead, [&](const DeadLetter& d) { return d.offset >= end; });
  }
}

// R33: once a write or sync failed, nothing more is written or read until a reopen.
void Model::check_storage() const {
  if (storage_failed_) throw Error(ErrorCode::kIoError);
}

// R19: the drain a power cut stopped after `offers` offers, each with its commit (the last
// without its result, if last_unanswered; and without its handler's effect, if
// last_effect_undone).
std::size_t Model::drain_offers(std::size_t offers, bool last_unanswered, bool last_effect_undone) {
  offer_budget_ = offers;
  last_unanswered_ = last_unanswered;
  last_effect_undone_ = last_unanswered && last_effect_undone;
  std::size_t confirmed = 0;
  try {
    confirmed = drain();
  } catch (...) {
    offer_budget_ = SIZE_MAX;
    last_unanswered_ = last_effect_undone_ = false;
    throw;
  }
  offer_budget_ = SIZE_MAX;
  last_unanswered_ = last_effect_undone_ = false;
  return confirmed;
}

}  // namespace model
