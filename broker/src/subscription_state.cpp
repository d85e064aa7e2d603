#include "subscription_state.h"

#include <algorithm>
#include <utility>

namespace broker {

SubscriptionState::SubscriptionState(SubscriptionConfig config, std::shared_ptr<TopicLog> log,
                                     std::shared_ptr<const Clock> clock, Offset cursor,
                                     std::shared_ptr<CommitSink> sink)
    : config_(std::move(config)),
      log_(std::move(log)),
      clock_(std::move(clock)),
      topic_(std::make_shared<const std::string>(config_.topic)),
      cursor_(cursor),
      sink_(std::move(sink)),
      saved_position_(cursor) {}

void SubscriptionState::restore(std::map<Offset, int> attempts, std::vector<DeadLetter> dead) {
  attempts_.clear();
  attempts_.insert(attempts.begin(), attempts.end());
  dead_ = std::move(dead);
  saved_position_ = cursor_;
  saved_dead_ = dead_.size();
}

void SubscriptionState::continue_from(const SubscriptionState& old) {
  cursor_ = old.cursor_;
  redelivery_ = old.redelivery_;  // what a redrive returned while nobody was subscribed (R25)
  index_waiting();
  attempts_ = old.attempts_;
  dead_ = old.dead_;
  counters_ = old.counters_;
  paused_ = old.paused_;
  saved_position_ = old.saved_position_;
  saved_dead_ = old.saved_dead_;
  dead_rewritten_ = old.dead_rewritten_;
}

Offset SubscriptionState::committed() const {
  Offset c = cursor_;
  if (!redelivery_.empty()) c = std::min(c, redelivery_.begin()->first);
  if (!in_flight_.empty()) c = std::min(c, in_flight_.begin()->first);
  if (!run_held_.empty()) c = std::min(c, run_held_.front());
  return c;
}

std::uint64_t SubscriptionState::save_position(bool force) {
  if (!sink_) return 0;
  const Offset position = committed();
  if (!force && !dead_rewritten_ && position == saved_position_ && dead_.size() == saved_dead_) {
    return 0;
  }
  const std::size_t from = dead_rewritten_ ? 0 : saved_dead_;
  const std::vector<DeadLetter> dead(dead_.begin() + static_cast<std::ptrdiff_t>(from),
                                     dead_.end());
  const std::uint64_t ticket =
      sink_->commit(config_.topic, config_.name, position, attempts_, dead, dead_rewritten_, force);
  saved_position_ = position;
  saved_dead_ = dead_.size();
  dead_rewritten_ = false;
  return ticket;
}

void SubscriptionState::wait_saved(std::uint64_t ticket) {
  if (sink_ && ticket != 0) sink_->wait(ticket);
}

bool SubscriptionState::unfiltered() const {
  return config_.header_filter.empty() && !config_.predicate;
}

bool SubscriptionState::matches(const Message& m) const {
  for (const auto& [name, value] : config_.header_filter) {
    if (m.header(name) != value) return false;
  }
  return !config_.predicate || config_.predicate(m);
}

Offset SubscriptionState::catch_up() {
  const Offset oldest = log_->oldest();
  while (!redelivery_.empty() && redelivery_.begin()->first < oldest) {
    attempts_.erase(redelivery_.begin()->first);
    erase_waiting(redelivery_.begin()->first);
    ++counters_.skipped;
  }
  if (cursor_ < oldest) {
    counters_.skipped += oldest - cursor_;
    cursor_ = oldest;
  }
  return oldest;
}

std::optional<Held> SubscriptionState::take_next(const std::string& member, Time deadline,
                                                 Time now) {
  if (paused_) return std::nullopt;  // R26
  const bool ordered = config_.ordered_by_key;
  MessagePtr message;
  KeyLine* line = nullptr;  // R31: the taken message's key's line
  // A publish may drop messages between catch_up and a read (retention runs under the
  // log's lock only); a read that finds its offset gone catches up again, so the drop is
  // counted and a later message is still found (R3).
  while (!message) {
    catch_up();
    // Returned messages first, lowest offset first (R6), of those whose wait is over (R24)
    // and, ordered, whose key is free (R31): the index keeps exactly those candidates.
    bool dropped = false;
    if (ordered) {
      for (Offset o : free_waiting_) {
        if (redelivery_.at(o) > now) continue;
        message = read_returned(o);
        if (!message) {
          dropped = true;  // retention took it meanwhile: catch up again
          break;
        }
        erase_waiting(o);
        if (!message->key().empty()) line = &line_of(message->key());
        break;
      }
    } else {
      for (auto it = redelivery_.begin(); it != redelivery_.end(); ++it) {
        if (it->second > now) continue;
        message = read_returned(it->first);
        if (!message) {
          dropped = true;
          break;
        }
        redelivery_.erase(it);
        break;
      }
    }
    if (message || dropped) continue;
    // Then the cursor; every returned message is below it, so a key with one waiting is
    // blocked at the cursor too.
    for (;;) {
      MessagePtr m = log_->read_at(reader_, cursor_);
      if (!m) {
        if (cursor_ < log_->oldest()) break;  // dropped meanwhile: catch up again
        return std::nullopt;                  // nothing after the cursor
      }
      if (!matches(*m)) {
        ++cursor_;
        ++counters_.filtered;
        continue;
      }
      if (spent(m->offset())) {  // R34: its saved offers used up max_deliveries
        bury(std::move(m), now);
        ++cursor_;
        continue;
      }
      if (ordered && !m->key().empty()) {
        KeyLine& l = line_of(m->key());
        if (!idle(l)) {
          // R31: passed over, it waits like a returned message; past the bound the line
          // waits.
          if (redelivery_.size() >= kMaxPassedOver) return std::nullopt;
          add_waiting(m->offset(), Time::min(), m->key());
          ++cursor_;
          continue;
        }
        line = &l;
      }
      ++cursor_;
      message = std::move(m);
      break;
    }
  }
  return hold(std::move(message), member, deadline, line);
}

bool SubscriptionState::spent(Offset offset) const {
  if (config_.max_deliveries <= 0 || attempts_.empty()) return false;
  const auto it = attempts_.find(offset);
  return it != attempts_.end() && it->second >= config_.max_deliveries;
}

void SubscriptionState::bury(MessagePtr message, Time now) {
  const Offset offset = message->offset();
  const int attempts = attempts_.at(offset);
  attempts_.erase(offset);
  dead_.push_back(
      DeadLetter{config_.topic, config_.name, std::move(message), attempts, "max deliveries", now});
  ++counters_.dead_lettered;
}

Held& SubscriptionState::hold(MessagePtr message, const std::string& member, Time deadline,
                              KeyLine* line) {
  // A message offered before has an entry; one taken the first time gets one only where
  // commits save the attempts of held messages (durable, R19): a lane's message that is
  // confirmed at once costs no map node.
  const Offset offset = message->offset();
  int attempt = 1;
  if (auto it = attempts_.find(offset); it != attempts_.end()) {
    attempt = ++it->second;
  } else if (sink_) {
    attempts_.emplace(offset, 1);
  }
  ++counters_.delivered;
  if (attempt > 1) ++counters_.redelivered;
  if (line != nullptr) {
    drop_head(*line);
    ++held_[line->slot];
  }
  // Built in place: each copy of a MessagePtr is an atomic on its segment's count, a cache
  // line every worker of the subscription writes.
  const auto [it, added] = in_flight_.insert_or_assign(
      offset, Held{std::move(message), member, deadline, attempt, line});
  return it->second;
}

bool SubscriptionState::take_from_cursor(const std::string& member, std::size_t max,
                                         std::vector<Held>& taken, std::vector<RunMark>& marks) {
  // Where take_next would look at returned messages, key lines or counted attempts first,
  // or a commit needs the attempts of held messages, a run takes one at a time.
  if (paused_ || config_.ordered_by_key || sink_ || !redelivery_.empty()) return false;
  if (!attempts_.empty() && attempts_.rbegin()->first >= cursor_) return false;
  if (!run_held_.empty() && run_held_.member() != member) return false;
  // Reserved, so that once a message is held nothing below throws.
  taken.reserve(max);
  marks.reserve(max);
  // The log's bounds are looked at once, then again only when the cursor reaches the end
  // seen (end first, then oldest: every offset between was kept at the second look), not at
  // each message: publishers write their cache line at every append.
  Offset end = log_->end();
  catch_up();
  while (taken.size() < max) {
    const RunMark mark = run_mark();
    MessagePtr message;
    for (;;) {  // take_next's walk from the cursor
      if (cursor_ >= end) {
        end = log_->end();
        catch_up();
        if (cursor_ >= end) return true;  // nothing after the cursor
      }
      message = log_->read_seen(reader_, cursor_);
      if (!message) {  // dropped since the look: the next turn looks at the bounds again
        end = cursor_;
        continue;
      }
      if (matches(*message)) break;
      ++cursor_;
      ++counters_.filtered;
    }
    run_held_.add(message, member);  // std::bad_alloc: not taken
    ++cursor_;
    ++counters_.delivered;
    marks.push_back(mark);
    taken.push_back(Held{std::move(message), member, Time::max(), 1, nullptr});
  }
  return true;
}

Held SubscriptionState::run_entry(std::size_t i) const {
  return Held{run_held_.at(i), run_held_.member(), Time::max(), run_held_.attempt(i), nullptr};
}

SubscriptionState::InFlight::iterator SubscriptionState::find_held(Offset offset) {
  if (!run_held_.empty() && run_held_.front() == offset) {
    const auto [it, added] = in_flight_.insert_or_assign(offset, run_entry(0));
    // In in_flight_ a message offered before has its attempts entry (hold's), which a
    // give-back counts down: a front retried in place gets it here.
    if (run_held_.attempt(0) > 1) attempts_[offset] = run_held_.attempt(0);
    run_held_.pop_front();
    return it;
  }
  if (run_held_.contains(offset)) spill_run();
  return in_flight_.find(offset);
}

void SubscriptionState::spill_run() {
  for (std::size_t i = 0; i < run_held_.size(); ++i) {
    in_flight_.insert_or_assign(run_held_.offset(i), run_entry(i));
  }
  if (!run_held_.empty() && run_held_.attempt(0) > 1) {
    attempts_[run_held_.front()] = run_held_.attempt(0);  // as find_held
  }
  run_held_.clear();
}

void SubscriptionState::add_run_offsets(std::vector<Offset>& out) const {
  if (run_held_.empty()) return;
  for (std::size_t i = 0; i < run_held_.size(); ++i) out.push_back(run_held_.offset(i));
  std::sort(out.begin(), out.end());
}

MessagePtr SubscriptionState::read_returned(Offset offset) {
  // Within [base, limit) of the cursor's segment read_at neither locks nor moves the cursor
  // (a returned offset is below it); below that segment, the locked read.
  const MessageSegment* at = reader_.segment.get();
  if (at != nullptr && offset >= at->base() && offset < at->limit()) {
    return log_->read_at(reader_, offset);
  }
  return log_->read(offset);
}

std::optional<Held> SubscriptionState::take_again(const MessagePtr& message,
                                                  const std::string& member, Time now) {
  if (paused_ || config_.ordered_by_key || sink_) return std::nullopt;
  // As take_next: retention may have taken it. This look at the log's oldest is the take's
  // moment (a drop after it is as if it came a moment later); the message itself is the one
  // the run holds, not read again: a read looks at the log's bounds once more, a cache line
  // publishers write at every append.
  catch_up();
  if (redelivery_.size() != 1) return std::nullopt;
  const auto [waiting, not_before] = *redelivery_.begin();
  if (waiting != message->offset() || not_before > now) return std::nullopt;
  redelivery_.clear();
  return hold(message, member, Time::max(), nullptr);
}

void SubscriptionState::give_back(const RunMark& before, const RunMark& after,
                                  std::span<const Held> unoffered) {
  // Newest first: run_held_ gives back from its back.
  for (auto h = unoffered.rbegin(); h != unoffered.rend(); ++h) {
    const Offset offset = h->message->offset();
    release_key(*h);
    // A front retried in place was offered before: it goes by in_flight_ (find_held), where
    // its attempts entry counts the offer it had.
    if (!run_held_.empty() && run_held_.back() == offset &&
        (run_held_.size() > 1 || run_held_.attempt(0) == 1)) {
      run_held_.pop_back();
    } else if (auto it = find_held(offset); it != in_flight_.end()) {
      in_flight_.erase(it);
    }
    if (auto it = attempts_.find(offset); it != attempts_.end() && --it->second <= 0) {
      attempts_.erase(it);
    }
    --counters_.delivered;
    if (h->attempt > 1) --counters_.redelivered;
  }
  counters_.filtered -= after.filtered - before.filtered;
  // A catch-up since the takes (retention; stats calls one) moved the cursor on from
  // after.cursor and counted what it passed as skipped: from before.cursor the next
  // catch-up counts it again, with what the takes had passed.
  counters_.skipped -= (after.skipped - before.skipped) + (cursor_ - after.cursor);
  cursor_ = before.cursor;
}

bool SubscriptionState::confirm(Offset offset) {
  if (!run_held_.empty() && run_held_.front() == offset) {
    // A run's message, confirmed in the order taken: no attempts entry (a front retried in
    // place keeps its attempt in run_held_), no key line.
    run_held_.pop_front();
    ++counters_.confirmed;
    return true;
  }
  auto it = find_held(offset);
  if (it == in_flight_.end()) return false;
  release_key(it->second);
  in_flight_.erase(it);
  attempts_.erase(offset);
  ++counters_.confirmed;
  return true;
}

bool SubscriptionState::fail(Offset offset, const Failure& failure) {
  auto it = find_held(offset);
  if (it == in_flight_.end()) return false;
  release_key(it->second);
  MessagePtr message = std::move(it->second.message);
  const int attempts = it->second.attempt;
  in_flight_.erase(it);
  if (failure.terminal || (config_.max_deliveries > 0 && attempts >= config_.max_deliveries)) {
    attempts_.erase(offset);
    dead_.push_back(DeadLetter{config_.topic, config_.name, std::move(message), attempts,
                               failure.reason, failure.at});
    ++counters_.dead_lettered;
    return true;
  }
  attempts_[offset] = attempts;  // returned: its offers so far (hold made none for a first)
  add_waiting(offset, failure.at + wait_after(attempts, failure), message->key());
  return false;
}

Millis SubscriptionState::wait_after(int attempts, const Failure& failure) const {
  if (failure.delay || config_.backoff.empty()) return failure.delay.value_or(Millis{0});
  return config_
      .backoff[std::min<std::size_t>(static_cast<std::size_t>(attempts), config_.backoff.size()) -
               1];
}

bool SubscriptionState::retry_run_front(Offset offset, const Failure& failure, Time now) {
  // fail's conditions for going back to redelivery, then take_again's for taking it again.
  if (run_held_.empty() || run_held_.front() != offset) return false;
  const int attempts = run_held_.attempt(0);
  if (failure.terminal || (config_.max_deliveries > 0 && attempts >= config_.max_deliveries)) {
    return false;
  }
  if (paused_ || config_.ordered_by_key || sink_ || !redelivery_.empty()) return false;
  if (failure.at + wait_after(attempts, failure) > now) return false;
  // Dropped meanwhile: fail and take_next count it skipped. A log without a bound drops
  // nothing, and its bounds share the cache line publishers write at every append: no look.
  if (log_->bounded() && offset < catch_up()) return false;
  // hold's counts for the new offer; the message has no key line (not ordered) to release.
  run_held_.retry_front();
  ++counters_.delivered;
  ++counters_.redelivered;
  return true;
}

std::optional<Time> SubscriptionState::next_wait_end(Time now) const {
  std::optional<Time> earliest;
  for (const auto& [offset, not_before] : redelivery_) {
    if (not_before > now && (!earliest || not_before < *earliest)) earliest = not_before;
  }
  return earliest;
}

Held* SubscriptionState::answerable(const Receipt& r, Time now, AckOutcome& why) {
  if (owner && (r.member != owner->member || r.generation < owner->since ||
                r.generation > owner->generation)) {
    why = AckOutcome::kStaleGeneration;  // fenced (R32): the partition moved since r was handed out
    return nullptr;
  }
  const auto it = find_held(r.offset);
  if (it == in_flight_.end()) {
    why = r.offset >= cursor_ ? AckOutcome::kUnknownOffset : AckOutcome::kAlreadySettled;
    return nullptr;
  }
  if (it->second.member != r.member) {
    why = AckOutcome::kNotHolder;
    return nullptr;
  }
  if (now >= it->second.deadline) {
    why = AckOutcome::kLate;
    return nullptr;
  }
  why = AckOutcome::kAccepted;
  return &it->second;
}

std::vector<Offset> SubscriptionState::held_offsets() const {
  std::vector<Offset> out;
  out.reserve(held_count());
  for (const auto& [offset, held] : in_flight_) out.push_back(offset);
  add_run_offsets(out);
  return out;
}

std::vector<Offset> SubscriptionState::late(Time now) const {
  std::vector<Offset> out;
  for (const auto& [offset, held] : in_flight_) {
    if (held.deadline <= now) out.push_back(offset);
  }
  // A run's messages have no deadline: late only "at the end of time".
  if (now == Time::max()) add_run_offsets(out);
  return out;
}

std::optional<Time> SubscriptionState::earliest_deadline() const {
  std::optional<Time> earliest;
  for (const auto& [offset, held] : in_flight_) {
    if (!earliest || held.deadline < *earliest) earliest = held.deadline;
  }
  if (!earliest && !run_held_.empty()) earliest = Time::max();
  return earliest;
}

void SubscriptionState::release_key(const Held& h) {
  if (h.line != nullptr && --held_[h.line->slot] == 0) add_head(*h.line);
}

bool SubscriptionState::idle(const KeyLine& line) const {
  return held_[line.slot] == 0 && line.waiting.empty();
}

KeyLine& SubscriptionState::line_of(std::string_view key) {
  auto it = keys_.find(key);
  if (it != keys_.end()) return it->second;
  if (keys_.size() >= sweep_at_) {
    // Amortized: at least half the lines made since the last sweep are swept or live.
    for (auto line = keys_.begin(); line != keys_.end();) {
      if (idle(line->second)) {
        free_slots_.push_back(line->second.slot);
        line = keys_.erase(line);
      } else {
        ++line;
      }
    }
    sweep_at_ = std::max(kMinSweep, 2 * keys_.size());
  }
  KeyLine& line = keys_.emplace(std::string(key), KeyLine{}).first->second;
  if (free_slots_.empty()) {
    line.slot = static_cast<std::uint32_t>(held_.size());
    held_.push_back(0);
  } else {
    line.slot = free_slots_.back();
    free_slots_.pop_back();
  }
  return line;
}

void SubscriptionState::drop_head(const KeyLine& line) {
  if (!line.waiting.empty()) free_waiting_.erase(*line.waiting.begin());
}

void SubscriptionState::add_head(const KeyLine& line) {
  if (!line.waiting.empty() && held_[line.slot] == 0) free_waiting_.insert(*line.waiting.begin());
}

void SubscriptionState::add_waiting(Offset offset, Time not_before, std::string_view key) {
  redelivery_[offset] = not_before;
  if (!config_.ordered_by_key) return;
  waiting_key_[offset] = key;
  if (key.empty()) {
    free_waiting_.insert(offset);
    return;
  }
  KeyLine& line = line_of(key);
  drop_head(line);
  line.waiting.insert(offset);
  add_head(line);
}

void SubscriptionState::erase_waiting(Offset offset) {
  redelivery_.erase(offset);
  if (!config_.ordered_by_key) return;
  auto k = waiting_key_.find(offset);
  if (k == waiting_key_.end()) return;
  const std::string key = std::move(k->second);
  waiting_key_.erase(k);
  free_waiting_.erase(offset);
  if (key.empty()) return;
  KeyLine& line = keys_.at(key);
  drop_head(line);
  line.waiting.erase(offset);
  add_head(line);
}

void SubscriptionState::index_waiting() {
  waiting_key_.clear();
  free_waiting_.clear();
  for (auto& entry : keys_) entry.second.waiting.clear();
  if (!config_.ordered_by_key) return;
  const std::map<Offset, Time> all = std::move(redelivery_);
  redelivery_.clear();
  for (const auto& [offset, not_before] : all) {
    MessagePtr m = log_->read(offset);
    add_waiting(offset, not_before, m ? m->key() : std::string_view());
  }
}

void SubscriptionState::seek(Offset offset) {
  cursor_ = offset;
  redelivery_.clear();
  in_flight_.clear();
  run_held_.clear();
  keys_.clear();
  held_.clear();
  free_slots_.clear();
  index_waiting();
  attempts_.clear();
  offers.void_running();
  cut_runs();
}

bool SubscriptionState::has_next(std::optional<Time> now) {
  catch_up();
  for (const auto& [offset, not_before] : redelivery_) {
    if (!now || not_before <= *now) return true;
  }
  const Offset end = log_->end();
  // Without a filter every kept offset counts, and the newest is always kept: no read
  // (a durable topic's recovered messages are read from disk).
  if (unfiltered()) return cursor_ < end;
  for (Offset o = cursor_; o < end; ++o) {
    MessagePtr m = log_->read(o);
    if (m && matches(*m)) return true;
  }
  return false;
}

SubscriptionStats SubscriptionState::stats() {
  catch_up();
  SubscriptionStats s = counters_;
  s.cursor = cursor_;
  s.committed = committed();
  s.in_flight = held_count();
  s.paused = paused_;
  s.backlog = redelivery_.size();
  const Offset end = log_->end();
  if (unfiltered()) {
    const Offset from = std::max(cursor_, log_->oldest());
    if (end > from) s.backlog += end - from;
    return s;
  }
  for (Offset o = cursor_; o < end; ++o) {
    MessagePtr m = log_->read(o);
    if (m && matches(*m)) ++s.backlog;
  }
  return s;
}

bool SubscriptionState::set_paused(bool paused) {
  const bool changed = paused_ != paused;
  paused_ = paused;
  if (paused) cut_runs();  // R26: no offer starts once pause returned
  return changed;
}

std::size_t SubscriptionState::redrive() {
  catch_up();
  const Offset oldest = log_->oldest();
  std::vector<DeadLetter> stay;
  std::size_t moved = 0;
  for (DeadLetter& d : dead_) {
    const Offset o = d.message->offset();
    if (o < oldest) {  // retention dropped it: only redrive_to can move it
      stay.push_back(std::move(d));
      continue;
    }
    ++moved;
    // Already waiting or held (after a seek back): it will be offered anyway.
    if (o >= cursor_ || redelivery_.contains(o) || in_flight_.contains(o) ||
        run_held_.contains(o)) {
      continue;
    }
    attempts_.erase(o);
    add_waiting(o, Time::min(), d.message->key());
  }
  dead_ = std::move(stay);
  counters_.redriven += moved;
  dead_rewritten_ = true;
  if (moved > 0) cut_runs();  // R6: returned messages come first
  return moved;
}

std::size_t SubscriptionState::drop_dead_letters(const std::vector<DeadLetter>& gone,
                                                 bool redriven) {
  std::size_t dropped = 0;
  for (const DeadLetter& g : gone) {
    auto it = std::find_if(dead_.begin(), dead_.end(), [&g](const DeadLetter& d) {
      return d.message == g.message && d.attempts == g.attempts && d.reason == g.reason &&
             d.died_at == g.died_at;
    });
    if (it == dead_.end()) continue;  // a concurrent redrive or purge took it
    dead_.erase(it);
    ++dropped;
  }
  (redriven ? counters_.redriven : counters_.purged) += dropped;
  if (dropped > 0) dead_rewritten_ = true;
  return dropped;
}

Lag SubscriptionState::lag(Time now) {
  spill_run();  // the oldest held message is looked up below
  // A publish may drop a returned message between catch_up and its read (as in take_next):
  // then catch up again.
  for (;;) {
    const SubscriptionStats s = stats();  // catches up
    Lag out{s.backlog + s.in_flight, Millis{0}};
    std::optional<Offset> lowest;
    auto take = [&lowest](Offset o) { lowest = lowest ? std::min(*lowest, o) : o; };
    if (!redelivery_.empty()) take(redelivery_.begin()->first);
    if (!in_flight_.empty()) take(in_flight_.begin()->first);
    const Offset end = log_->end();
    for (Offset o = cursor_; o < end && (!lowest || o < *lowest); ++o) {
      MessagePtr m = log_->read(o);
      if (m && matches(*m)) {
        take(o);
        break;
      }
    }
    if (!lowest) return out;
    auto held = in_flight_.find(*lowest);
    MessagePtr m = held != in_flight_.end() ? held->second.message : log_->read(*lowest);
    if (!m) continue;
    out.oldest_age = std::max(Millis{0}, now - m->publish_time());
    return out;
  }
}

}  // namespace broker
