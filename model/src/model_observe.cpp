// Observation: stats and dead letters (R13).
#include <algorithm>
#include <tuple>

#include "model/model.h"

namespace model {

// R13: committed position, cursor, backlog = redelivery + matching messages from the
// cursor, held, counters. A group's name is accepted (R10). R29: a partitioned topic's are
// the sums over its partitions, in partition order (the first one without `name` throws).
Stats Model::stats(const std::string& topic, const std::string& name) {
  if (const std::uint32_t n = any_topic_or_throw(topic).partitions; n > 1) {
    Stats total;
    total.paused = true;
    for (std::uint32_t p = 0; p < n; ++p) {
      const Stats s = stats(partition_name(topic, p), name);
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
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  catch_up(t, s);
  Stats out = s.counters;
  out.committed = committed(s);
  out.cursor = s.cursor;
  out.backlog = s.redelivery.size();
  for (auto it = t.log.lower_bound(s.cursor); it != t.log.end(); ++it) {
    if (matches(s.filter, it->second)) out.backlog += 1;
  }
  out.in_flight = s.in_flight.size();
  out.paused = s.paused;
  return out;
}

// R7: dead letters in the order they died (a member or the group's name reports the group).
std::vector<DeadLetter> Model::dead_letters(const std::string& topic, const std::string& name) {
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  catch_up(t, s);
  return s.dead;
}

// Generators only: what a pull subscription holds, so acks can aim at it.
std::vector<Model::HeldView> Model::held(const std::string& topic, const std::string& sub) const {
  std::vector<HeldView> out;
  for (const Topic& t : topics_) {
    if (t.name != topic) continue;
    auto it = t.pulls.find(sub);
    if (it == t.pulls.end()) break;
    for (const auto& [offset, h] : t.subs.at(it->second).in_flight) {
      out.push_back(HeldView{offset, h.member, h.deadline});
    }
  }
  return out;
}

// Generators only: the pull subscription names of a topic.
std::vector<std::string> Model::pull_names(const std::string& topic) const {
  std::vector<std::string> out;
  for (const Topic& t : topics_) {
    if (t.name != topic) continue;
    for (const auto& [name, id] : t.pulls) out.push_back(name);
  }
  return out;
}

// Generators only: whether a pull subscription has something to hand out, roughly.
bool Model::has_waiting(const std::string& topic, const std::string& sub) const {
  for (const Topic& t : topics_) {
    if (t.name != topic) continue;
    auto it = t.pulls.find(sub);
    if (it == t.pulls.end()) return false;
    const Sub& s = t.subs.at(it->second);
    return !s.redelivery.empty() || s.cursor < t.end;
  }
  return false;
}

// Generators only: the waits of a pull subscription's returned messages.
std::vector<Millis> Model::retry_waits(const std::string& topic, const std::string& sub) const {
  std::vector<Millis> out;
  for (const Topic& t : topics_) {
    if (t.name != topic) continue;
    auto it = t.pulls.find(sub);
    if (it == t.pulls.end()) return out;
    const Sub& s = t.subs.at(it->second);
    for (const Offset o : s.redelivery) {
      if (s.returned.at(o).not_before != Sub::kNoWait) out.push_back(s.returned.at(o).not_before);
    }
  }
  return out;
}

// Generators only: the push group names of a topic.
std::vector<std::string> Model::group_names(const std::string& topic) const {
  std::vector<std::string> out;
  for (const Topic& t : topics_) {
    if (t.name != topic) continue;
    for (const auto& [name, id] : t.groups) out.push_back(name);
  }
  return out;
}

// Generators only: the states with dead letters, by the name their dead letters carry.
std::vector<std::string> Model::dead_letter_names(const std::string& topic) const {
  std::vector<std::string> out;
  for (const Topic& t : topics_) {
    if (t.name != topic) continue;
    for (std::uint64_t id : t.order) {
      const Sub& s = t.subs.at(id);
      if (!s.dead.empty()) out.push_back(s.name);
    }
  }
  return out;
}

std::vector<std::string> Model::waiting_for_handler() const {
  std::vector<std::tuple<std::string, std::string, bool>> found;
  for (const Topic& t : topics_) {
    for (const auto& [id, s] : t.subs) {
      if (!s.pull && s.members.empty() && !s.owner)
        found.emplace_back(t.name, s.name, !s.group.empty());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (const auto& [topic, name, group] : found) {
    out.push_back(topic + "/" + name + (group ? " group" : ""));
  }
  return out;
}

// Generators only: push names a restart left without a handler (R20).
std::vector<std::string> Model::dormant_names(const std::string& topic) const {
  std::vector<std::string> out;
  for (const Topic& t : topics_) {
    if (t.name != topic) continue;
    for (const auto& [name, id] : t.dormant) out.push_back(name);
    for (const auto& [name, id] : t.groups) {
      if (t.subs.at(id).members.empty()) out.push_back(name);
    }
  }
  return out;
}

}  // namespace model
