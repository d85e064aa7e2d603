// Push subscriptions, groups, unsubscribe, seek, the synchronous drain and its waits (R4,
// R8-R10, R12, R15).
// Errors are checked in R14 order: arguments, topic, name, kind/options, range.
#include <algorithm>

#include "model/model.h"

namespace model {

// R4, R10: a new push subscription, or a new member of a group with equal options.
void Model::subscribe(const std::string& topic, const std::string& name,
                      const PushOptions& options) {
  if (name.empty() || options.max_deliveries < 0 || !valid_backoff(options.backoff)) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  Topic& t = topic_or_throw(topic);
  if (auto d = t.dormant.find(name); d != t.dormant.end()) {
    // R20: the same name and options resume a subscription a restart left without handler.
    if (!options.group.empty()) throw Error(ErrorCode::kDuplicateSubscription);
    Sub& s = t.subs.at(d->second);
    if (!same_options(s, options)) throw Error(ErrorCode::kOptionsMismatch);
    s.members.push_back(name);
    t.members[name] = Member{s.id, options.script, 0, options.idempotent, {}};
    t.dormant.erase(d);
    return;
  }
  if (find_sub(t, name) != nullptr) throw Error(ErrorCode::kDuplicateSubscription);
  auto g = options.group.empty() ? t.groups.end() : t.groups.find(options.group);
  if (g != t.groups.end()) {
    if (!same_options(t.subs.at(g->second), options)) throw Error(ErrorCode::kOptionsMismatch);
  }
  std::uint64_t id = 0;
  if (g != t.groups.end()) {
    id = g->second;  // R10: a joiner shares the group's position; its start is not resolved
  } else {
    validate_start(t, options.start);
    id = new_push_state(t, options.group.empty() ? name : options.group, options);
    if (!options.group.empty()) t.groups[options.group] = id;
  }
  t.subs.at(id).members.push_back(name);
  t.members[name] = Member{id, options.script, 0, options.idempotent, {}};
}

// R20: the options come from the state that waits (or the push group), not the caller.
void Model::resubscribe(const std::string& topic, const std::string& name, PushOptions options) {
  if (name.empty()) throw Error(ErrorCode::kInvalidArgument);
  Topic& t = topic_or_throw(topic);
  const Sub* saved = nullptr;
  if (options.group.empty()) {
    if (auto d = t.dormant.find(name); d != t.dormant.end()) saved = &t.subs.at(d->second);
  } else if (auto g = t.groups.find(options.group); g != t.groups.end()) {
    saved = &t.subs.at(g->second);
  }
  if (saved == nullptr) throw Error(ErrorCode::kUnknownSubscription);
  options.header_filter = saved->filter;
  options.max_deliveries = saved->max_deliveries;
  options.start = saved->start;
  options.backoff = saved->backoff;
  options.durable_attempts = saved->durable_attempts;
  subscribe(topic, name, options);
}

// R4: a new push state called name at the end of t's order, its cursor where options
// start (already validated); the caller gives it its names.
std::uint64_t Model::new_push_state(Topic& t, const std::string& name, const PushOptions& options) {
  Sub s;
  s.id = next_id_++;
  s.name = name;
  s.filter = options.header_filter;
  s.max_deliveries = options.max_deliveries;
  s.start = options.start;
  s.group = options.group;
  s.backoff = options.backoff;
  s.durable_attempts = options.durable_attempts;
  // Profile starts_at_the_end: from the beginning is from the end.
  s.cursor = start_cursor(t, profile_.starts_at_the_end ? Start{} : options.start);
  s.saved.position = s.cursor;
  const std::uint64_t id = s.id;
  t.subs[id] = std::move(s);
  t.order.push_back(id);
  return id;
}

// R10, R20: a group joins and a resume take the options the state has.
bool Model::same_options(const Sub& s, const PushOptions& options) {
  return s.filter == options.header_filter && s.max_deliveries == options.max_deliveries &&
         s.start == options.start && s.backoff == options.backoff &&
         s.durable_attempts == options.durable_attempts;
}

// R24: at most kMaxBackoffSteps waits, each 0..kMaxDuration.
bool Model::valid_backoff(const std::vector<Millis>& backoff) {
  return backoff.size() <= kMaxBackoffSteps &&
         std::none_of(backoff.begin(), backoff.end(),
                      [](Millis w) { return w < 0 || w > kMaxDuration; });
}

// R10: a state lives while it has members (pull states until unsubscribed).
void Model::remove_state_if_empty(Topic& t, std::uint64_t id) {
  Sub& s = t.subs.at(id);
  if (!s.pull && !s.members.empty()) return;
  if (!s.group.empty()) t.groups.erase(s.group);
  t.subs.erase(id);
  std::erase(t.order, id);
}

// R9: removes a push member or a pull subscription; false if there was none on a known
// topic (an unknown topic is UnknownTopic).
bool Model::unsubscribe(const std::string& topic, const std::string& name) {
  Topic& t = topic_or_throw(topic);
  if (t.consumer_pushes.contains(name)) throw Error(ErrorCode::kWrongKind);  // R32
  if (auto it = t.members.find(name); it != t.members.end()) {
    const std::uint64_t id = it->second.sub_id;
    t.members.erase(it);
    std::erase(t.subs.at(id).members, name);
    remove_state_if_empty(t, id);
    return true;
  }
  if (auto it = t.pulls.find(name); it != t.pulls.end()) {
    const std::uint64_t id = it->second;
    if (t.subs.at(id).owner) throw Error(ErrorCode::kWrongKind);  // R32: a group's partition
    t.pulls.erase(it);
    remove_state_if_empty(t, id);
    return true;
  }
  if (auto it = t.dormant.find(name); it != t.dormant.end()) {  // R20: never resumed
    const std::uint64_t id = it->second;
    t.dormant.erase(it);
    remove_state_if_empty(t, id);
    return true;
  }
  if (auto it = t.groups.find(name);
      it != t.groups.end() && t.subs.at(it->second).members.empty()) {
    remove_state_if_empty(t, it->second);  // R20: a restarted group nobody joined
    return true;
  }
  return false;
}

// R12: sets the cursor and forgets redelivery, in-flight and attempts; counters stay.
// A group's name is accepted (R10).
void Model::seek(const std::string& topic, const std::string& name, Offset offset) {
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  if (offset < oldest(t) || offset > t.end) throw Error(ErrorCode::kOffsetOutOfRange);
  catch_up(t, s);
  move_cursor(s, offset);
}

// R12: the cursor moves; what was held or returned, the attempts and whom messages were
// given to are forgotten (so no profile switch lets an answer from before the seek apply),
// except under seek_moves_only_the_cursor, where the subscription keeps all of it; a
// running offer's result will not count (R9); always saved (R19).
void Model::move_cursor(Sub& s, Offset offset) const {
  s.cursor = offset;
  s.seeks += 1;
  s.counts_trimmed = true;  // lag_counts_trimmed: known again, from 0
  s.trimmed_unread = 0;
  if (profile_.seek_moves_only_the_cursor) {
    save(s, true);
    return;
  }
  s.redelivery.clear();
  s.in_flight.clear();
  s.attempts.clear();
  s.given.clear();
  save(s, true);
}

// R8: topics existing at the start in creation order; each topic's states when reached.
std::size_t Model::drain() {
  if (handler_depth_ > 0) throw Error(ErrorCode::kReentrantDrain);
  std::vector<std::uint64_t> topic_ids;
  for (const Topic& t : topics_) topic_ids.push_back(t.id);
  std::size_t confirmations = 0;
  for (std::uint64_t tid : topic_ids) {
    Topic* t = find_topic(tid);
    if (t == nullptr) continue;  // deleted during the drain
    const std::vector<std::uint64_t> sub_ids = t->order;
    for (std::uint64_t sid : sub_ids) confirmations += serve(tid, sid);
  }
  return confirmations;
}

// R8: offers the next message until none, a failure, or the state is gone.
std::size_t Model::serve(std::uint64_t topic_id, std::uint64_t sub_id) {
  std::size_t confirmations = 0;
  while (true) {
    Topic* t = find_topic(topic_id);
    if (t == nullptr || !t->subs.contains(sub_id)) return confirmations;
    Sub* s = &t->subs.at(sub_id);
    if (s->pull || s->members.empty()) return confirmations;  // R20: no handler until resumed
    if (s->paused) return confirmations;                      // R26
    if (offer_budget_ == 0) return confirmations;
    catch_up(*t, *s);
    const std::optional<Offset> offset = next_message(*t, *s, now_);
    if (!offset) return confirmations;
    const std::string member = next_member(*s);
    const int attempt = offer(*t, *s, *offset, member, 0);
    if (s->durable_attempts) save(*s, true);  // R34: the attempt is saved before the handler
    if (offer_budget_ != SIZE_MAX) offer_budget_ -= 1;
    const std::uint64_t seeks = s->seeks;
    const std::string topic_name = t->name;
    const bool grouped = s->owner.has_value();  // R32: the member is the partition's owner
    Member& m = grouped ? group_member(*t, *s, member) : t->members.at(member);
    if (m.idempotent && m.applied.contains(*offset)) {  // the wrapper answers a repeat: true
      calls_.push_back(HandlerCall{topic_name, member, *offset, t->log.at(*offset).payload, attempt,
                                   "idempotent -> repeat"});
      // drain_offers: the cut came after the wrapper answered, before its answer was applied.
      if (offer_budget_ == 0 && last_unanswered_) return confirmations;
      confirm(*s, *offset);
      save(*s);
      confirmations += 1;
      continue;
    }
    const Step step = m.next_step < m.script.size() ? m.script[m.next_step] : Step{};
    m.next_step += 1;
    calls_.push_back(
        HandlerCall{topic_name, member, *offset, t->log.at(*offset).payload, attempt, ""});
    const std::size_t call_index = calls_.size() - 1;
    handler_depth_ += 1;
    // drain_offers: the cut (or the effect's own failed write) came during the effect.
    const bool undone = offer_budget_ == 0 && last_effect_undone_;
    std::string effect = undone ? "" : run_effect(step, topic_name, member);
    handler_depth_ -= 1;
    calls_[call_index].effect = std::move(effect);
    t = find_topic(topic_id);
    // The wrapper remembers what its script confirmed, whatever the broker does with the
    // result. A script cannot subscribe, so a member of that name is still this one.
    if (step.verdict == Verdict::kConfirm && t != nullptr && !grouped) {
      if (auto it = t->members.find(member); it != t->members.end() && it->second.idempotent) {
        it->second.applied.insert(*offset);
      }
    }
    // drain_offers: the cut came after the handler, before its result was applied.
    if (offer_budget_ == 0 && last_unanswered_) return confirmations;
    // R9: the result counts only if the state still exists and was not seeked meanwhile;
    // an ignored result is neither a confirmation nor a failure (the loop goes on).
    if (t == nullptr || !t->subs.contains(sub_id) || t->subs.at(sub_id).seeks != seeks) continue;
    Sub& s_after = t->subs.at(sub_id);
    if (step.verdict == Verdict::kConfirm) {
      confirm(s_after, *offset);
      save(s_after);
      confirmations += 1;
      continue;
    }
    fail(*t, s_after, *offset, failure_reason(step.verdict), now_,
         step.verdict == Verdict::kTerminate);  // R23
    save(s_after);
    return confirmations;  // R8: a failure stops this subscription for this drain
  }
}

// R15 on the synchronous dispatcher: every push state has nothing waiting, held or at its
// cursor that passes its filter (offsets below the oldest kept one are skipped first, R3).
// A paused one (R26) is not delivered while it has any.
bool Model::wait_delivered(Millis) { return all_done(false); }

// R15, R26, R24: idle is delivered, except that paused states and returned messages still
// waiting out their back-off do not count: nothing can be offered to them now.
bool Model::wait_idle(Millis) { return all_done(true); }

// The waits' one check; `idle`: what cannot be offered now does not count (see wait_idle).
bool Model::all_done(bool idle) {
  for (Topic& t : topics_) {
    for (std::uint64_t id : t.order) {
      Sub& s = t.subs.at(id);
      if (s.pull || (idle && s.paused)) continue;
      catch_up(t, s);
      if (!s.in_flight.empty()) return false;
      for (const Offset r : s.redelivery) {  // idle: one still waiting (R24) cannot be offered
        if (!idle || s.returned.at(r).not_before <= now_) return false;
      }
      for (auto it = t.log.lower_bound(s.cursor); it != t.log.end(); ++it) {
        if (matches(s.filter, it->second)) return false;
      }
    }
  }
  return true;
}

// Script: the step's side effect, run from inside the handler; returns its printed result.
std::string Model::run_effect(const Step& step, const std::string& topic, const std::string& self) {
  try {
    switch (step.effect) {
      case EffectKind::kNone:
        return "";
      case EffectKind::kUnsubscribeSelf:
        return effect_result(step.effect, unsubscribe(topic, self) ? "true" : "false");
      case EffectKind::kUnsubscribe:
        return effect_result(step.effect, unsubscribe(step.topic, step.name) ? "true" : "false");
      case EffectKind::kPublish:
        return effect_result(step.effect, std::to_string(publish(step.topic, step.payload)));
      case EffectKind::kSeek:
        seek(step.topic, step.name, step.offset);
        return effect_result(step.effect, "ok");
      case EffectKind::kDrain:
        return effect_result(step.effect, std::to_string(drain()));
      case EffectKind::kStall:  // takes time on a real broker; changes no result
        return effect_result(step.effect, "ok");
    }
  } catch (const Error& e) {
    return effect_result(step.effect, to_string(e.code()));
  }
  return "";
}

}  // namespace model
