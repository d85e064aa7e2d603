// The per-subscription rules of SPEC.md, one small function each.
#include <algorithm>
#include <set>
#include <tuple>

#include "model/model.h"

namespace model {

// R3: the first kept offset (the end when nothing was ever published).
Offset Model::oldest(const Topic& t) { return t.log.empty() ? t.end : t.log.begin()->first; }

// R3: after an append keep the newest N messages and at most B payload bytes (newest stays).
void Model::apply_retention(Topic& t) {
  const auto drop_oldest = [&t] { t.dropped.insert(t.log.extract(t.log.begin())); };
  if (t.retention_messages > 0) {
    while (t.log.size() > t.retention_messages) drop_oldest();
  }
  if (t.retention_bytes > 0) {
    auto bytes = [&t] {
      std::size_t sum = 0;
      for (const auto& [offset, m] : t.log) sum += m.payload.size();
      return sum;
    };
    while (t.log.size() > 1 && bytes() > t.retention_bytes) drop_oldest();
  }
}

// R4: an explicit start offset must lie in [oldest, end].
void Model::validate_start(const Topic& t, const Start& start) {
  if (start.kind == Start::Kind::kOffset && (start.offset < oldest(t) || start.offset > t.end)) {
    throw Error(ErrorCode::kOffsetOutOfRange);
  }
}

// R4: end of the log (default), the oldest kept offset, or the given offset.
Offset Model::start_cursor(const Topic& t, const Start& start) {
  switch (start.kind) {
    case Start::Kind::kEnd:
      return t.end;
    case Start::Kind::kBeginning:
      return oldest(t);
    case Start::Kind::kOffset:
      return start.offset;
  }
  return t.end;
}

// R5: a header filter passes when every listed header is present and equal.
bool Model::matches(const Headers& filter, const Message& m) {
  for (const auto& [name, value] : filter) {
    auto it = m.headers.find(name);
    if (it == m.headers.end() || it->second != value) return false;
  }
  return true;
}

// R3: waiting offsets below the oldest kept one are dropped and counted in `skipped`.
void Model::catch_up(const Topic& t, Sub& s) const {
  const Offset first = oldest(t);
  while (!s.redelivery.empty() && *s.redelivery.begin() < first) {
    const Offset offset = *s.redelivery.begin();
    const auto r = s.returned.find(offset);
    if (profile_.lag_counts_trimmed && (r == s.returned.end() || !r->second.gone)) {
      s.trimmed_returned += 1;  // pending in the engine until the next poll
    }
    s.attempts.erase(offset);
    s.redelivery.erase(s.redelivery.begin());
    s.counters.skipped += 1;
  }
  if (s.cursor < first) {
    s.counters.skipped += first - s.cursor;
    if (profile_.lag_counts_trimmed && s.counts_trimmed) s.trimmed_unread += first - s.cursor;
    s.cursor = first;
  }
}

// R5: lowest redelivery entry whose wait is over (R24), else the first match at or after
// the cursor (under retry_wait_holds_a_place only while max_in_flight leaves room for it).
std::optional<Offset> Model::next_message(const Topic& t, Sub& s, Millis now) const {
  for (;;) {
    // Of the returned messages whose wait is over, the lowest offset (the set is ascending),
    // or under the profile the one that came back first.
    std::optional<Offset> ready;
    for (const Offset r : s.redelivery) {
      if (s.returned.at(r).not_before > now || key_blocked(t, s, r)) continue;
      if (!ready) {
        ready = r;
      } else if (profile_.redelivery_in_return_order) {
        const Sub::Returned& a = s.returned.at(r);
        const Sub::Returned& b = s.returned.at(*ready);
        if (std::tie(a.due, a.order) < std::tie(b.due, b.order)) ready = r;
      }
    }
    if (!ready) break;
    // Profile returned_to_the_back: without max deliveries, what was published before it came
    // back goes first.
    if (profile_.returned_to_the_back && s.max_deliveries == 0 &&
        new_before(t, s, s.returned.at(*ready).behind)) {
      break;
    }
    const Offset o = *ready;
    s.redelivery.erase(o);
    if (profile_.dead_letter_when_offered_again && s.pull && s.max_deliveries > 0 &&
        s.attempts[o] >= s.max_deliveries) {
      const Message& m = t.log.at(o);
      s.dead.push_back(DeadLetter{t.name, s.name, o, m.payload, s.attempts[o], "max deliveries",
                                  now, m.headers, m.key});
      s.counters.dead_lettered += 1;
      s.attempts.erase(o);
      continue;
    }
    return o;
  }
  // Profile retry_wait_holds_a_place: returned messages keep their places under
  // max_in_flight, so a new one needs room for them too (counted after the dead above left).
  if (profile_.retry_wait_holds_a_place && s.max_in_flight > 0 &&
      s.in_flight.size() + s.redelivery.size() >= s.max_in_flight) {
    return std::nullopt;
  }
  while (s.cursor < t.end) {
    const Message& m = t.log.at(s.cursor);
    s.counts_trimmed = true;  // a new message read (lag_counts_trimmed)
    if (!matches(s.filter, m)) {
      s.cursor += 1;
      s.counters.filtered += 1;
      continue;
    }
    if (profile_.seek_moves_only_the_cursor) {
      // Reached again after a seek while still held or returned: handed out anew, its
      // attempts starting over (so never spent by them, below).
      s.in_flight.erase(m.offset);
      s.redelivery.erase(m.offset);
      s.attempts.erase(m.offset);
    }
    // R34: its saved offers (a restart keeps them, R20) used up max_deliveries: it is dead,
    // never offered again. Only after a restart has a message at the cursor offers.
    if (const auto a = s.attempts.find(m.offset);
        s.max_deliveries > 0 && a != s.attempts.end() && a->second >= s.max_deliveries) {
      s.dead.push_back(DeadLetter{t.name, s.name, m.offset, m.payload, a->second, "max deliveries",
                                  now, m.headers, m.key});
      s.counters.dead_lettered += 1;
      s.attempts.erase(a);
      s.cursor += 1;
      continue;
    }
    if (key_blocked(t, s, m.offset)) {
      // R31: passed over, it waits like a returned message; past the bound the line waits.
      if (s.redelivery.size() >= kMaxPassedOver) break;
      s.cursor += 1;
      s.redelivery.insert(m.offset);
      s.returned[m.offset] = Sub::Returned{"", ++s.events, false, Sub::kNoWait, Sub::kNoWait};
      continue;
    }
    s.cursor += 1;
    return m.offset;
  }
  return std::nullopt;
}

bool Model::new_before(const Topic& t, const Sub& s, Offset end) {
  for (Offset o = std::max(s.cursor, oldest(t)); o < std::min(end, t.end); ++o) {
    if (matches(s.filter, t.log.at(o))) return true;
  }
  return false;
}

// R31: on an ordered subscription a keyed message waits while another message of its key
// is held or a lower one of its key waits (returned or passed over).
bool Model::key_blocked(const Topic& t, const Sub& s, Offset offset) {
  const std::string& key = t.log.at(offset).key;
  if (!s.ordered_by_key || key.empty()) return false;
  for (const auto& [o, held] : s.in_flight) {
    if (o != offset && held.message.key == key) return true;
  }
  for (const Offset o : s.redelivery) {
    if (o < offset && t.log.at(o).key == key) return true;
  }
  return false;
}

// R6: an offer counts an attempt and holds the message for `member` until answered.
int Model::offer(const Topic& t, Sub& s, Offset offset, const std::string& member,
                 Millis deadline) const {
  const int attempt = ++s.attempts[offset];
  s.counters.delivered += 1;
  if (attempt > 1) s.counters.redelivered += 1;
  s.in_flight[offset] = Held{member, deadline, attempt, t.log.at(offset), ++s.events};
  // Only the switches on answers from members that no longer hold a message read this.
  if (profile_.late_ack_by_previous_holder || profile_.acks_always_confirmed ||
      profile_.term_always_announced || profile_.answers_reset_a_retry_wait) {
    Sub::Given& g = s.given[offset];
    g.attempt_of[member] = attempt;
    g.message = t.log.at(offset);
  }
  return attempt;
}

// R3 under the profile's trimmed_held_keeps_only_its_offset: a held message whose body
// retention dropped is forgotten, and counted as skipped.
void Model::forget_held(Sub& s, Offset offset) {
  s.in_flight.erase(offset);
  s.attempts.erase(offset);
  s.counters.skipped += 1;
}

// R7: a confirmation forgets the message.
void Model::confirm(Sub& s, Offset offset) {
  s.in_flight.erase(offset);
  s.attempts.erase(offset);
  s.counters.confirmed += 1;
}

// R7: a failure dead-letters at max_deliveries (recording where, why and when), else
// returns the message; true if dead. R23: a terminal failure (term) dead-letters at once.
// R24: a returned message waits `delay` ms, or (none) what the back-off list says for the
// attempt that failed.
bool Model::fail(const Topic& t, Sub& s, Offset offset, const std::string& reason, Millis now,
                 bool terminal, std::optional<Millis> delay) const {
  const Held held = s.in_flight.at(offset);
  s.in_flight.erase(offset);
  const int attempts = s.attempts[offset];
  if (terminal || (s.max_deliveries > 0 && attempts >= s.max_deliveries &&
                   !(profile_.dead_letter_when_offered_again && s.pull))) {
    // Under the profile a dropped message's body went with the log; only its offset is left.
    const bool body_gone = profile_.trimmed_held_keeps_only_its_offset && offset < oldest(t);
    const Message m = body_gone ? Message{} : held.message;
    s.dead.push_back(
        DeadLetter{t.name, s.name, offset, m.payload, attempts, reason, now, m.headers, m.key});
    s.counters.dead_lettered += 1;
    s.attempts.erase(offset);
    return true;
  }
  if (!delay) {
    delay =
        s.backoff.empty() ? 0 : s.backoff[std::min<std::size_t>(attempts, s.backoff.size()) - 1];
  }
  s.redelivery.insert(offset);
  s.returned[offset] = Sub::Returned{held.member,  ++s.events,         false, now + *delay,
                                     now + *delay, offset < oldest(t), t.end};
  return false;
}

// R13: the committed position, the lowest offset not yet done with: everything below the
// cursor that is neither waiting nor held was confirmed, dead-lettered, filtered or skipped.
Offset Model::committed(const Sub& s) {
  Offset lowest = s.cursor;
  if (!s.redelivery.empty()) lowest = std::min(lowest, *s.redelivery.begin());
  if (!s.in_flight.empty()) lowest = std::min(lowest, s.in_flight.begin()->first);
  return lowest;
}

// R10: the member after the previous one, wrapping; the first if that one left.
std::string Model::next_member(Sub& s) {
  std::size_t next = 0;
  for (std::size_t i = 0; i < s.members.size(); ++i) {
    if (s.members[i] == s.last_member) next = (i + 1) % s.members.size();
  }
  s.last_member = s.members[next];
  return s.last_member;
}

// R11: an answer counts only from the holder, strictly before the deadline.
bool Model::accepted(const Sub& s, Offset offset, const std::string& member, Millis now) const {
  auto it = s.in_flight.find(offset);
  return it != s.in_flight.end() && it->second.member == member &&
         (now < it->second.deadline || profile_.late_ack_accepted);
}

// Profile late_ack_accepted: a message whose deadline passed and that was not offered since
// is still settled by the member it was last given to. ack_after_nack_settles: so is one
// that member nacked, by an ack or term (not by another nack).
bool Model::settles_late(const Sub& s, Offset offset, const std::string& member, bool nack) const {
  if (!s.redelivery.contains(offset) || s.returned.at(offset).member != member) return false;
  return s.returned.at(offset).by_expiry ? profile_.late_ack_accepted
                                         : !nack && profile_.ack_after_nack_settles;
}

// Profile late_ack_by_previous_holder: member was given the message before, it is not
// settled, and member is neither its holder nor the one it came back from.
bool Model::previous_holder(const Sub& s, Offset offset, const std::string& member) const {
  if (!profile_.late_ack_by_previous_holder || !was_given(s, offset, member)) return false;
  if (auto h = s.in_flight.find(offset); h != s.in_flight.end()) return h->second.member != member;
  return s.redelivery.contains(offset) && s.returned.at(offset).member != member;
}

// Profile answers_reset_a_retry_wait: the message is returned, not yet offered again, and
// was given to member.
bool Model::resets_wait(const Sub& s, Offset offset, const std::string& member) const {
  return profile_.answers_reset_a_retry_wait && s.redelivery.contains(offset) &&
         was_given(s, offset, member);
}

// Whether the message was ever handed to member (recorded only under the switches that
// read it).
bool Model::was_given(const Sub& s, Offset offset, const std::string& member) {
  auto g = s.given.find(offset);
  return g != s.given.end() && g->second.attempt_of.contains(member);
}

// Profile acks_always_confirmed: the answer to a member the message was ever given to.
bool Model::confirmed_anyway(const Sub& s, Offset offset, const std::string& member) const {
  return profile_.acks_always_confirmed && was_given(s, offset, member);
}

// R11: why an answer that took no other path was refused (AckOutcome's order after
// fencing); under acks_always_confirmed one from a member the message was given to is
// answered accepted though it changed nothing.
AckResult Model::refused(const Sub& s, Offset offset, const std::string& member) const {
  if (confirmed_anyway(s, offset, member)) return {};
  const auto it = s.in_flight.find(offset);
  if (it == s.in_flight.end()) {
    return {offset >= s.cursor ? AckOutcome::kUnknownOffset : AckOutcome::kAlreadySettled};
  }
  return {it->second.member != member ? AckOutcome::kNotHolder : AckOutcome::kLate};
}

// A returned message settled (late_ack_accepted, ack_after_nack_settles,
// late_ack_by_previous_holder): it is not offered again.
void Model::settle_returned(Sub& s, Offset offset) {
  s.redelivery.erase(offset);
  s.attempts.erase(offset);
  s.counters.confirmed += 1;
}

// A term by a member the message was given to, as a dead letter with the attempt that
// member was given (its attempts if that was not recorded) and its body (profile switches;
// called before the message leaves in_flight or redelivery).
void Model::announce_term(const Topic& t, Sub& s, Offset offset, const std::string& member,
                          Millis now) {
  Message m;
  int attempts = s.attempts.contains(offset) ? s.attempts.at(offset) : 0;
  if (was_given(s, offset, member)) {
    m = s.given.at(offset).message;
    attempts = s.given.at(offset).attempt_of.at(member);
  } else if (auto l = t.log.find(offset); l != t.log.end()) {
    m = l->second;
  } else if (auto d = t.dropped.find(offset); d != t.dropped.end()) {
    m = d->second;
  }
  s.dead.push_back(
      DeadLetter{t.name, s.name, offset, m.payload, attempts, "terminated", now, m.headers, m.key});
  s.counters.dead_lettered += 1;
}

// Profile retention_terminates_held: every held or returned message retention dropped is
// a dead letter now ("terminated", with its attempts and body), lowest offset first.
void Model::terminate_dropped(Topic& t, Millis now) const {
  for (auto& [id, s] : t.subs) {
    std::set<Offset> dropped;
    for (const auto& [offset, held] : s.in_flight) {
      if (offset < oldest(t)) dropped.insert(offset);
    }
    for (const Offset offset : s.redelivery) {
      if (offset < oldest(t)) dropped.insert(offset);
    }
    for (const Offset offset : dropped) {
      const Message m = s.in_flight.contains(offset) ? s.in_flight.at(offset).message
                        : t.dropped.contains(offset) ? t.dropped.at(offset)
                                                     : Message{};
      s.dead.push_back(DeadLetter{t.name, s.name, offset, m.payload, s.attempts[offset],
                                  "terminated", now, m.headers, m.key});
      s.counters.dead_lettered += 1;
      s.in_flight.erase(offset);
      s.redelivery.erase(offset);
      s.attempts.erase(offset);
    }
    if (!dropped.empty()) save(s);
  }
}

}  // namespace model
