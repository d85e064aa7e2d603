// Pull subscriptions: poll, ack, nack, extend, expire (R11).
// Errors are checked in R14 order: arguments, topic, name, kind/options, range.
#include <algorithm>
#include <utility>

#include "model/model.h"

namespace model {

// R11: the pull subscription `name` for poll/ack/nack/extend; WrongKind for a push one (a
// push group's name included), UnknownSubscription if none (bad input is an error; false means "not
// accepted").
Model::Sub& Model::pull_or_throw(Topic& t, const std::string& name) {
  if (t.members.contains(name) || t.dormant.contains(name) || t.consumer_pushes.contains(name)) {
    throw Error(ErrorCode::kWrongKind);
  }
  auto it = t.pulls.find(name);
  if (it != t.pulls.end()) return t.subs.at(it->second);
  // A push group's name names a push state too (R10): the wrong kind, not an unknown name.
  if (t.groups.contains(name)) throw Error(ErrorCode::kWrongKind);
  throw Error(ErrorCode::kUnknownSubscription);
}

// R11, R14: options no pull subscription may have.
bool Model::valid(const PullOptions& options) {
  return options.ack_timeout > 0 && options.ack_timeout <= kMaxDuration &&
         options.max_deliveries >= 0 && options.max_in_flight <= kMaxInFlight &&
         valid_backoff(options.backoff);
}

// R32: a receipt is fenced on a group's partition unless its member owns the partition
// and has owned it since the receipt's generation.
bool Model::fenced(const Sub& s, const std::string& member, std::uint64_t generation) {
  return s.owner && (s.owner->member != member || generation < s.owner->since ||
                     generation > s.owner->generation);
}

// R11: same name with equal options is a no-op; other options or a push name are refused.
void Model::subscribe_pull(const std::string& topic, const std::string& name,
                           const PullOptions& options) {
  if (name.empty() || !valid(options)) throw Error(ErrorCode::kInvalidArgument);
  Topic& t = topic_or_throw(topic);
  if (t.members.contains(name) || t.dormant.contains(name) || t.consumer_pushes.contains(name)) {
    throw Error(ErrorCode::kWrongKind);
  }
  if (auto it = t.pulls.find(name); it != t.pulls.end()) {
    const Sub& s = t.subs.at(it->second);
    const PullOptions existing{s.filter,         s.ack_timeout,     s.max_deliveries,
                               s.start,          s.max_in_flight,   s.backoff,
                               s.ordered_by_key, s.durable_attempts};
    if (existing == options) return;
    throw Error(ErrorCode::kOptionsMismatch);
  }
  validate_start(t, options.start);
  Sub s;
  s.id = next_id_++;
  s.name = name;
  s.pull = true;
  s.filter = options.header_filter;
  s.ack_timeout = options.ack_timeout;
  s.max_deliveries = options.max_deliveries;
  s.start = options.start;
  s.max_in_flight = options.max_in_flight;
  s.backoff = options.backoff;
  s.ordered_by_key = options.ordered_by_key;
  s.durable_attempts = options.durable_attempts;
  // Profile starts_at_the_end: from the beginning is from the end.
  s.cursor = start_cursor(t, profile_.starts_at_the_end ? Start{} : options.start);
  s.saved.position = s.cursor;
  s.counts_trimmed = options.start.kind != Start::Kind::kBeginning;  // lag_counts_trimmed
  t.pulls[name] = s.id;
  t.order.push_back(s.id);
  t.subs[s.id] = std::move(s);
}

// R11: up to max messages by R5, each held by member until now + ack_timeout; R22: none
// while the subscription holds max_in_flight (every member's, redeliveries too); R26: none
// while it is paused.
std::vector<Received> Model::poll(const std::string& topic, const std::string& sub,
                                  const std::string& member, Millis now, std::size_t max) {
  if (max == 0 || member.empty()) throw Error(ErrorCode::kInvalidArgument);
  Topic& t = topic_or_throw(topic);
  Sub& s = pull_or_throw(t, sub);
  if (s.owner) throw Error(ErrorCode::kWrongKind);  // R32: a group's partition: poll_group
  catch_up(t, s);
  s.trimmed_returned = 0;  // lag_counts_trimmed: the claim below drops them all
  if (profile_.trimmed_held_keeps_only_its_offset) {
    // The engine's claim of what came back (XAUTOCLAIM) drops every pending entry whose body
    // is gone, held or not, before it looks at idle times.
    std::vector<Offset> gone;
    for (const auto& [offset, held] : s.in_flight) {
      if (offset < oldest(t)) gone.push_back(offset);
    }
    for (const Offset offset : gone) forget_held(s, offset);
  }
  std::vector<Received> out;
  while (out.size() < max && !s.paused &&
         (s.max_in_flight == 0 || s.in_flight.size() < s.max_in_flight)) {
    const std::optional<Offset> offset = next_message(t, s, now);
    if (!offset) break;
    const Millis deadline = now + s.ack_timeout;
    const int attempt = offer(t, s, *offset, member, deadline);
    out.push_back(Received{*offset, t.log.at(*offset).payload, attempt, deadline});
  }
  save(s, s.durable_attempts && !out.empty());  // filtered and skipped ones move it too; R34
  return out;
}

// R11, R14: poll at the model's clock; a sequential model gets nothing while it waits.
std::vector<Received> Model::poll_wait(const std::string& topic, const std::string& sub,
                                       const std::string& member, std::size_t max, Millis) {
  return poll(topic, sub, member, now_, max);
}

// R11, R7: an accepted ack confirms. Under the profile's switches a late one, one after a
// nack or one from a previous holder settles too, and any member the message was given
// to may be answered true (acks_always_confirmed).
AckResult Model::ack(const std::string& topic, const std::string& sub, Offset offset,
                     const std::string& member, Millis now, std::uint64_t generation) {
  Sub& s = pull_or_throw(topic_or_throw(topic), sub);
  if (fenced(s, member, generation)) return {AckOutcome::kStaleGeneration};
  if (settles_late(s, offset, member, /*nack=*/false) ||
      (previous_holder(s, offset, member) && !s.in_flight.contains(offset))) {
    settle_returned(s, offset);
  } else if (accepted(s, offset, member, now) || previous_holder(s, offset, member)) {
    confirm(s, offset);
  } else {
    return refused(s, offset, member);
  }
  save(s);
  return {};
}

// R11, R7: an accepted nack fails the message (reason "nacked"); R24: it waits `delay` ms
// (none: what the back-off list says) before it is offered again. Under the profile's
// late_ack_by_previous_holder a previous holder's nack fails it too; under
// answers_reset_a_retry_wait a nack of a returned message sets its wait anew.
AckResult Model::nack(const std::string& topic, const std::string& sub, Offset offset,
                      const std::string& member, Millis now, std::optional<Millis> delay,
                      std::uint64_t generation) {
  if (delay && (*delay < 0 || *delay > kMaxDuration)) throw Error(ErrorCode::kInvalidArgument);
  Topic& t = topic_or_throw(topic);
  Sub& s = pull_or_throw(t, sub);
  if (fenced(s, member, generation)) return {AckOutcome::kStaleGeneration};
  if (resets_wait(s, offset, member)) {
    // One already ready stays where it is (a plain nack changes nothing for it).
    Sub::Returned& r = s.returned.at(offset);
    if (delay.value_or(0) > 0 || r.not_before > now) r.not_before = r.due = now + delay.value_or(0);
    return {};
  }
  if (settles_late(s, offset, member, /*nack=*/true)) return {};  // it stays returned
  if (previous_holder(s, offset, member) && !s.in_flight.contains(offset)) return {};  // ditto
  if (!accepted(s, offset, member, now) && !previous_holder(s, offset, member)) {
    return refused(s, offset, member);
  }
  fail(t, s, offset, "nacked", now, /*terminal=*/false, delay);
  save(s);
  return {};
}

// R23: an accepted term gives up on the message: dead-lettered now, whatever its attempts
// (accepted as an ack is: from its holder, before the deadline; a returned message cannot be).
// Under the profile's switches a term settles what an ack would settle, as a dead letter
// with the attempt its member was given, and term_always_announced makes every term from a
// member the message was given to a dead letter.
AckResult Model::term(const std::string& topic, const std::string& sub, Offset offset,
                      const std::string& member, Millis now, std::uint64_t generation) {
  Topic& t = topic_or_throw(topic);
  Sub& s = pull_or_throw(t, sub);
  if (fenced(s, member, generation)) return {AckOutcome::kStaleGeneration};
  if (accepted(s, offset, member, now)) {
    fail(t, s, offset, "terminated", now, /*terminal=*/true);
    save(s);
    return {};
  }
  const bool settles =
      settles_late(s, offset, member, /*nack=*/false) || previous_holder(s, offset, member);
  if (!settles && !(profile_.term_always_announced && was_given(s, offset, member))) {
    return refused(s, offset, member);
  }
  announce_term(t, s, offset, member, now);
  if (settles) {
    s.in_flight.erase(offset);
    s.redelivery.erase(offset);
    s.attempts.erase(offset);
  }
  save(s);
  return {};
}

// R11: an accepted extend sets deadline = now + extension (under the profile's
// trimmed_held_keeps_only_its_offset, one of a message retention dropped forgets it; under
// late_ack_by_previous_holder a previous holder's moves the holder's deadline; under
// answers_reset_a_retry_wait one of a returned message still waiting ends its wait at
// now + extension).
AckResult Model::extend(const std::string& topic, const std::string& sub, Offset offset,
                        const std::string& member, Millis now, Millis extension,
                        std::uint64_t generation) {
  if (extension <= 0 || extension > kMaxDuration) throw Error(ErrorCode::kInvalidArgument);
  Topic& t = topic_or_throw(topic);
  Sub& s = pull_or_throw(t, sub);
  if (fenced(s, member, generation)) return {AckOutcome::kStaleGeneration};
  if (resets_wait(s, offset, member) && s.returned.at(offset).not_before > now) {
    Sub::Returned& r = s.returned.at(offset);
    r.not_before = r.due = now + extension;  // a ready one stays ready
    return {};
  }
  if (previous_holder(s, offset, member) && s.in_flight.contains(offset)) {
    s.in_flight.at(offset).deadline = now + extension;
    return {};
  }
  if (!accepted(s, offset, member, now)) return refused(s, offset, member);
  if (profile_.trimmed_held_keeps_only_its_offset && offset < oldest(t)) {
    // The engine re-claims the entry to restart its deadline, and a claim drops an entry
    // whose body is gone: nothing is held any more, and nothing comes back.
    forget_held(s, offset);
    save(s);
    return {};
  }
  s.in_flight.at(offset).deadline = now + extension;
  return {};
}

// R11, R7: fails every held pull message with deadline <= now, in creation/offset order.
std::vector<Expired> Model::expire(Millis now, std::size_t subscriptions) {
  std::vector<Expired> out;
  for (Topic& t : topics_) {
    for (std::uint64_t id : t.order) {
      Sub& s = t.subs.at(id);
      if (!s.pull) continue;
      if (subscriptions-- == 0) return out;
      catch_up(t, s);
      std::vector<Offset> late;
      for (const auto& [offset, held] : s.in_flight) {
        if (held.deadline <= now) late.push_back(offset);
      }
      // They came back as their deadlines passed; equal deadlines in offset order (`late` is
      // in offset order and the sort is stable), as JetStream sorts what one pass of its
      // ack-wait timer finds.
      if (profile_.redelivery_in_return_order) {
        std::stable_sort(late.begin(), late.end(), [&](Offset a, Offset b) {
          return s.in_flight.at(a).deadline < s.in_flight.at(b).deadline;
        });
      }
      for (Offset offset : late) {
        const Millis deadline = s.in_flight.at(offset).deadline;
        const bool dead = fail(t, s, offset, "ack deadline expired", now);
        if (!dead) {
          s.returned.at(offset).by_expiry = true;
          s.returned.at(offset).due = deadline;
        }
        out.push_back(Expired{t.name, s.name, offset, dead});
      }
      save(s);
    }
  }
  return out;
}

}  // namespace model
