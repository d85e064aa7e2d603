#include "subscription_state.h"

#include <algorithm>
#include <utility>

#include "mutant.h"

namespace broker {

SubscriptionState::SubscriptionState(Config config, std::shared_ptr<TopicLog> log, Offset cursor)
    : config_(std::move(config)), log_(std::move(log)), cursor_(cursor) {}

bool SubscriptionState::matches(const Message& m) const {
  for (const auto& [name, value] : config_.header_filter) {
    auto it = m.headers.find(name);
    if (it == m.headers.end() || it->second != value) return false;
  }
  return !config_.predicate || config_.predicate(m);
}

void SubscriptionState::catch_up() {
  const Offset oldest = log_->oldest();
  while (!redelivery_.empty() && *redelivery_.begin() < oldest) {
    attempts_.erase(*redelivery_.begin());
    redelivery_.erase(redelivery_.begin());
    if (!MUTANT(gap_not_counted)) ++counters_.skipped;
  }
  if (cursor_ < oldest) {
    if (!MUTANT(gap_not_counted)) counters_.skipped += oldest - cursor_;
    cursor_ = oldest;
  }
}

std::optional<Held> SubscriptionState::take_next(const std::string& member, Time deadline) {
  catch_up();
  MessagePtr message;
  auto from_redelivery = [&]() REQUIRES(mu) {
    if (redelivery_.empty()) return;
    message = log_->read(*redelivery_.begin());
    redelivery_.erase(redelivery_.begin());
  };
#if defined(BROKER_MUTANTS)
  Offset& cursor = MUTANT(shared_offset) ? log_->mutant_shared_cursor() : cursor_;
#else
  Offset& cursor = cursor_;
#endif
  auto from_cursor = [&]() REQUIRES(mu) {
    for (MessagePtr m = log_->read(cursor); m; m = log_->read(cursor)) {
      ++cursor;
      if (matches(*m) || (MUTANT(filter_wrong_time) && config_.kind == Kind::kPull)) {
        message = std::move(m);
        return;
      }
      ++counters_.filtered;
    }
  };
  if (MUTANT(late_to_back)) {
    from_cursor();
    if (!message) from_redelivery();
  } else {
    from_redelivery();
    if (!message) from_cursor();
  }
  if (!message) return std::nullopt;
  const int attempt =
      MUTANT(attempt_not_counted) ? (attempts_[message->offset] = 1) : ++attempts_[message->offset];
  ++counters_.delivered;
  if (attempt > 1 && !MUTANT(stats_drift)) ++counters_.redelivered;
  Held held{message, member, deadline, attempt};
  in_flight_[message->offset] = held;
  return held;
}

bool SubscriptionState::confirm(Offset offset) {
  auto it = in_flight_.find(offset);
  if (it == in_flight_.end()) return false;
  if (!MUTANT(double_ack)) in_flight_.erase(it);
  attempts_.erase(offset);
  ++counters_.confirmed;
  return true;
}

bool SubscriptionState::fail(Offset offset, const Failure& failure) {
  auto it = in_flight_.find(offset);
  if (it == in_flight_.end()) return false;
  MessagePtr message = std::move(it->second.message);
  in_flight_.erase(it);
  if (MUTANT(offset_before_confirm)) {  // at-most-once: a failed message is simply gone
    attempts_.erase(offset);
    return false;
  }
  const int attempts = attempts_[offset];
  const int limit = config_.max_deliveries - (MUTANT(dead_letter_early) ? 1 : 0) +
                    (MUTANT(dead_letter_late) ? 1 : 0);
  if (config_.max_deliveries > 0 && !MUTANT(failed_blocks_forever) && attempts >= limit) {
    attempts_.erase(offset);
    dead_.push_back(DeadLetter{std::move(message), attempts, failure.reason});
    ++counters_.dead_lettered;
    return true;
  }
  redelivery_.insert(offset);
  return false;
}

Held* SubscriptionState::held_by(Offset offset, const std::string& member, Time now) {
  auto it = in_flight_.find(offset);
  if (it == in_flight_.end() || (it->second.member != member && !MUTANT(ack_wrong_worker)) ||
      (MUTANT(ack_after_deadline) ? now > it->second.deadline : now >= it->second.deadline)) {
    return nullptr;
  }
  return &it->second;
}

std::vector<Offset> SubscriptionState::late(Time now) const {
  std::vector<Offset> out;
  for (const auto& [offset, held] : in_flight_) {
    if (MUTANT(expire_tie) ? held.deadline < now : held.deadline <= now) out.push_back(offset);
  }
  return out;
}

void SubscriptionState::seek(Offset offset) {
  cursor_ = offset;
  redelivery_.clear();
  in_flight_.clear();
  attempts_.clear();
  ++epoch;
}

bool SubscriptionState::has_next() {
  catch_up();
  if (!redelivery_.empty()) return true;
  const Offset end = log_->end();
  for (Offset o = cursor_; o < end; ++o) {
    MessagePtr m = log_->read(o);
    if (m && matches(*m)) return true;
  }
  return false;
}

SubscriptionStats SubscriptionState::stats() {
  catch_up();
  SubscriptionStats s = counters_;
  s.next_offset = cursor_;
  s.in_flight = in_flight_.size();
  s.backlog = redelivery_.size();
  const Offset end = log_->end();
  for (Offset o = cursor_; o < end; ++o) {
    MessagePtr m = log_->read(o);
    if (m && matches(*m)) ++s.backlog;
  }
  return s;
}

const Member* SubscriptionState::next_member() const {
  if (members.empty()) return nullptr;
  if (MUTANT(group_no_rotation)) return &members.front();
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].name == last_member) return &members[(i + 1) % members.size()];
  }
  return &members.front();  // nobody yet, or the previous member left
}

}  // namespace broker
