// The value-based checker of a fault run (conformance/fault_history.h).
#include "conformance/fault_history.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace conformance {

namespace {

// "v<i>" -> i; nullopt for anything else.
std::optional<std::size_t> index_of(const std::string& value) {
  if (value.size() < 2 || value[0] != 'v') return std::nullopt;
  std::size_t i = 0;
  for (std::size_t k = 1; k < value.size(); ++k) {
    if (value[k] < '0' || value[k] > '9') return std::nullopt;
    i = i * 10 + static_cast<std::size_t>(value[k] - '0');
  }
  return i;
}

// An engine id that is a number ("42"); nullopt otherwise ("1700000000-0").
std::optional<std::uint64_t> number_of(const std::string& id) {
  if (id.empty() || id.size() > 19) return std::nullopt;
  std::uint64_t n = 0;
  for (const char c : id) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

void add(std::map<std::string, std::vector<std::string>>& out, std::set<std::string>& seen,
         const std::string& name, const std::string& value) {
  if (seen.insert(name + "\n" + value).second) out[name].push_back(value);
}

}  // namespace

std::map<std::string, std::vector<std::string>> check_fault_history(
    const std::vector<FaultEvent>& history, AttemptsKept attempts,
    std::size_t* judged_across_restarts) {
  std::size_t across = 0;
  std::map<std::string, std::vector<std::string>> out;
  for (const std::string& name : anomaly_names()) out[name];
  std::set<std::string> seen;  // name + value pairs already counted

  std::map<std::string, PublishResult> published;   // value -> how its publish ended
  std::map<std::string, std::size_t> published_at;  // value -> its publish's position
  std::set<std::string> delivered;                  // values delivered at least once
  std::vector<std::size_t> failed_polls;            // positions, ascending
  for (std::size_t i = 0; i < history.size(); ++i) {
    const FaultEvent& e = history[i];
    if (e.kind == FaultEvent::Kind::kPublish) {
      published[e.value] = e.result;
      published_at.emplace(e.value, i);
    }
    if (e.kind == FaultEvent::Kind::kDeliver) delivered.insert(e.value);
    if (e.kind == FaultEvent::Kind::kPollFailed) failed_polls.push_back(i);
  }
  // The ack floor: every id below it was acked; it starts at the lowest id ever delivered
  // (delivery is in id order, so nothing stored lies below it) and moves over acked ids only.
  bool judge_floor = false;  // some id delivered, and every one a number
  std::uint64_t floor = 0;
  for (const FaultEvent& e : history) {
    if (e.kind != FaultEvent::Kind::kDeliver) continue;
    const std::optional<std::uint64_t> n = number_of(e.id);
    if (!n) {
      judge_floor = false;  // ids that are not all numbers: not judged
      break;
    }
    floor = judge_floor ? std::min(floor, *n) : *n;
    judge_floor = true;
  }
  std::set<std::uint64_t> acked_above_floor;
  // Whether a poll failed after value was published and before position `now`: that poll
  // may have handed it out unseen.
  auto maybe_seen = [&](const std::string& value, std::size_t now) {
    const auto p = published_at.find(value);
    if (p == published_at.end()) return false;
    const auto f = std::upper_bound(failed_polls.begin(), failed_polls.end(), p->second);
    return f != failed_polls.end() && *f < now;
  };

  std::map<std::string, std::set<std::string>> ids;  // value -> engine ids it came with
  std::set<std::string> acked;                       // values with an accepted ack
  std::set<std::string> handed;                      // values delivered so far
  std::map<std::string, std::size_t> last_first;     // consumer -> last first delivery
  // (value, engine id) -> the count and epoch of its last hand-out that said a count.
  std::map<std::pair<std::string, std::string>, std::pair<int, std::size_t>> last_attempt;
  std::set<std::size_t> ok_not_handed;  // published ok, not yet delivered
  std::set<std::size_t> at_poll_start;  // ok_not_handed as the current poll began
  std::size_t current_poll = 0;
  bool in_poll = false;
  std::size_t epoch = 0;
  for (std::size_t pos = 0; pos < history.size(); ++pos) {
    const FaultEvent& e = history[pos];
    if (e.epoch > epoch) {
      epoch = e.epoch;
      acked_above_floor.clear();  // the server was down since: those acks may be undone
    }
    const std::optional<std::size_t> index = index_of(e.value);
    switch (e.kind) {
      case FaultEvent::Kind::kPollFailed:
        in_poll = false;
        break;
      case FaultEvent::Kind::kAckFailed:
        in_poll = false;
        last_attempt.erase({e.value, e.id});  // it may have been settled: its count with it
        break;
      case FaultEvent::Kind::kPublish:
        in_poll = false;
        if (e.result == PublishResult::kOk && index && !handed.contains(e.value)) {
          ok_not_handed.insert(*index);
        }
        break;
      case FaultEvent::Kind::kAck:
        in_poll = false;
        if (e.accepted) {
          acked.insert(e.value);
          last_attempt.erase({e.value, e.id});  // settled: a restart may undo it, count and all
        }
        if (const std::optional<std::uint64_t> n = number_of(e.id);
            e.accepted && judge_floor && n) {
          if (*n >= floor) acked_above_floor.insert(*n);
          while (!acked_above_floor.empty() && *acked_above_floor.begin() == floor) {
            acked_above_floor.erase(acked_above_floor.begin());
            ++floor;
          }
        }
        break;
      case FaultEvent::Kind::kDeliver: {
        // The skipped set is taken as the poll began: values published ok before it.
        if (!in_poll || e.poll != current_poll) {
          current_poll = e.poll;
          in_poll = true;
          at_poll_start = ok_not_handed;
        }
        const auto p = published.find(e.value);
        if (!index || p == published.end() || p->second == PublishResult::kFailed) {
          add(out, seen, "unexpected", e.value);
        }
        ids[e.value].insert(e.id);
        if (ids[e.value].size() > 1) add(out, seen, "duplicated", e.value);
        if (e.attempt > 0) {
          const auto [last, inserted] =
              last_attempt.try_emplace({e.value, e.id}, e.attempt, e.epoch);
          const bool judged = attempts == AttemptsKept::kDurable || last->second.second == e.epoch;
          if (!inserted && judged && last->second.second < e.epoch) ++across;
          if (!inserted && judged && e.attempt <= last->second.first) {
            add(out, seen, "attempts-went-back", e.value);
          }
          last->second = {e.attempt, e.epoch};
        }
        // Handed out again above the floor (allowed): its earlier ack no longer holds it.
        if (const std::optional<std::uint64_t> n = number_of(e.id); judge_floor && n) {
          acked_above_floor.erase(*n);
        }
        if (acked.contains(e.value)) {
          add(out, seen, "acked-came-back", e.value);
          if (const std::optional<std::uint64_t> n = number_of(e.id);
              judge_floor && n && *n < floor) {
            add(out, seen, "floor-came-back", e.value);
          }
        }
        if (!handed.contains(e.value) && index) {
          // A first delivery: it must come after this consumer's earlier first deliveries,
          // and no value published ok before the poll may still be waiting ahead of it.
          if (auto l = last_first.find(e.consumer);
              l != last_first.end() && *index < l->second && !maybe_seen(e.value, pos)) {
            add(out, seen, "nonmonotonic", e.value);
          }
          last_first[e.consumer] = *index;
          for (const std::size_t earlier : at_poll_start) {
            if (earlier >= *index) break;
            const std::string v = "v" + std::to_string(earlier);
            if (!handed.contains(v) && delivered.contains(v) && !maybe_seen(v, pos)) {
              add(out, seen, "poll-skip", v);
            }
          }
        }
        handed.insert(e.value);
        if (index) ok_not_handed.erase(*index);
        break;
      }
    }
  }
  for (const auto& [value, result] : published) {
    if (result == PublishResult::kOk && !delivered.contains(value)) add(out, seen, "lost", value);
  }
  std::set<std::string> ack_tried;  // an accepted ack, or one the engine left unanswered
  for (const FaultEvent& e : history) {
    if ((e.kind == FaultEvent::Kind::kAck && e.accepted) ||
        e.kind == FaultEvent::Kind::kAckFailed) {
      ack_tried.insert(e.value);
    }
  }
  for (const std::string& value : delivered) {
    if (!ack_tried.contains(value)) add(out, seen, "lost-unacked", value);
  }
  if (judged_across_restarts != nullptr) *judged_across_restarts = across;
  return out;
}

}  // namespace conformance
