// Consumer groups over partitions (R32): join, leave, the rebalance each makes, poll_group
// and group_stats. Fencing is Model::fenced (model_pull.cpp), read by ack, nack, term, extend.
#include <algorithm>
#include <utility>

#include "model/assignment.h"
#include "model/model.h"

namespace model {

std::vector<Model::Topic*> Model::group_parts(const Topic& t) {
  if (t.partitions <= 1) return {find_topic(t.name)};
  std::vector<Topic*> out;
  for (std::uint32_t p = 0; p < t.partitions; ++p) {
    out.push_back(find_topic(partition_name(t.name, p)));
  }
  return out;
}

const Model::Group& Model::group_or_throw(const Topic& t, const std::string& group) const {
  auto it = t.consumer_groups.find(group);
  if (it == t.consumer_groups.end()) throw Error(ErrorCode::kUnknownSubscription);
  return it->second;
}

Model::Sub& Model::group_sub(Topic& part, const std::string& group) {
  auto it = part.pulls.find(group);
  return part.subs.at(it != part.pulls.end() ? it->second : part.consumer_pushes.at(group));
}

const Model::Sub& Model::group_sub(const Topic& part, const std::string& group) {
  auto it = part.pulls.find(group);
  return part.subs.at(it != part.pulls.end() ? it->second : part.consumer_pushes.at(group));
}

Model::Member& Model::group_member(Topic& part, const Sub& s, const std::string& member) {
  // The group lives on the partitioned topic, or on part itself when it was joined by
  // part's own name (a partition is a topic too).
  Topic& t = part.consumer_groups.contains(s.name) ? part : *find_topic(part.parent);
  return t.consumer_groups.at(s.name).handlers.at(member);
}

// R30 gives the partitions out; a partition whose owner changes (every partition, under an
// eager assignor) is revoked first: what was held on it comes back by R7 ("revoked").
void Model::rebalance(Topic& t, const std::string& group, std::vector<std::string> members) {
  Group& g = t.consumer_groups.at(group);
  std::vector<Topic*> parts = group_parts(t);
  const auto next =
      assign(g.assignor, members, static_cast<std::uint32_t>(parts.size()), g.assignment);
  const std::uint64_t generation = g.generation + 1;
  const bool eager = g.assignor != Assignor::kCooperativeSticky;
  for (std::uint32_t p = 0; p < parts.size(); ++p) {
    std::string owner;
    for (const auto& [member, mine] : next) {
      if (std::find(mine.begin(), mine.end(), p) != mine.end()) owner = member;
    }
    Sub& s = group_sub(*parts[p], group);
    std::uint64_t since = generation;
    if (eager || !s.owner || s.owner->member != owner) {
      std::vector<Offset> held;
      for (const auto& [offset, h] : s.in_flight) held.push_back(offset);
      for (Offset offset : held) fail(*parts[p], s, offset, "revoked", now_);
      // Push: the owner is the partition's one member. (A handler call still running when
      // its partition moves has its result voided; here no rebalance runs inside a call.)
      if (g.push) s.members = owner.empty() ? std::vector<std::string>{} : std::vector{owner};
    } else {
      since = s.owner->since;
    }
    s.owner = Sub::Owner{owner, since, generation};
    save(s);
  }
  g.members = std::move(members);
  g.generation = generation;
  g.assignment = next;
}

// R32: checks everything first (arguments, topic, the group's options, then each
// partition's subscription of that name), then makes what is missing and rebalances.
Membership Model::join_group(const std::string& topic, const std::string& group,
                             const std::string& member, Assignor assignor,
                             const PullOptions& options) {
  if (group.empty() || member.empty() || !valid(options)) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  Topic& t = any_topic_or_throw(topic);
  if (auto it = t.consumer_groups.find(group); it != t.consumer_groups.end()) {
    if (it->second.push) throw Error(ErrorCode::kWrongKind);
    if (it->second.assignor != assignor || !(it->second.options == options)) {
      throw Error(ErrorCode::kOptionsMismatch);
    }
  } else {
    for (Topic* part : group_parts(t)) {
      if (part->pulls.contains(group)) {
        subscribe_pull(part->name, group, options);  // equal options: adopted, else refused
      } else if (part->members.contains(group) || part->dormant.contains(group) ||
                 part->groups.contains(group) || part->consumer_pushes.contains(group)) {
        throw Error(ErrorCode::kWrongKind);
      } else {
        validate_start(*part, options.start);
      }
    }
    for (Topic* part : group_parts(t)) subscribe_pull(part->name, group, options);
    Group g;
    g.assignor = assignor;
    g.options = options;
    t.consumer_groups[group] = std::move(g);
  }
  return add_member(t, group, member, {});
}

// R32: a push group's first join checks every partition (a pull subscription of its name
// is the wrong kind; a live push subscription or group of its name a duplicate; a dormant
// one, R20, is adopted with equal options), then makes the missing states.
Membership Model::join_group_push(const std::string& topic, const std::string& group,
                                  const std::string& member, Assignor assignor,
                                  const PushOptions& options) {
  if (group.empty() || member.empty() || options.max_deliveries < 0 ||
      !valid_backoff(options.backoff) || !options.group.empty()) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  Topic& t = any_topic_or_throw(topic);
  if (auto it = t.consumer_groups.find(group); it != t.consumer_groups.end()) {
    const Group& g = it->second;
    if (!g.push) throw Error(ErrorCode::kWrongKind);
    if (g.assignor != assignor) throw Error(ErrorCode::kOptionsMismatch);
    if (!same_options(group_sub(*group_parts(t).front(), group), options)) {
      throw Error(ErrorCode::kOptionsMismatch);
    }
  } else {
    for (Topic* part : group_parts(t)) {
      if (part->pulls.contains(group)) throw Error(ErrorCode::kWrongKind);
      if (part->members.contains(group) || part->groups.contains(group) ||
          part->consumer_pushes.contains(group)) {
        throw Error(ErrorCode::kDuplicateSubscription);
      }
      if (auto d = part->dormant.find(group); d != part->dormant.end()) {
        if (!same_options(part->subs.at(d->second), options)) {
          throw Error(ErrorCode::kOptionsMismatch);
        }
      } else {
        validate_start(*part, options.start);
      }
    }
    for (Topic* part : group_parts(t)) {
      if (auto d = part->dormant.find(group); d != part->dormant.end()) {
        part->consumer_pushes[group] = d->second;
        part->dormant.erase(d);
        continue;
      }
      part->consumer_pushes[group] = new_push_state(*part, group, options);
    }
    Group g;
    g.assignor = assignor;
    g.push = true;
    g.push_options = options;
    t.consumer_groups[group] = std::move(g);
  }
  return add_member(t, group, member, options.script);
}

// R32: a new member (with its script, in a push group) makes a rebalance; a member already
// in the group changes nothing.
Membership Model::add_member(Topic& t, const std::string& group, const std::string& member,
                             const Script& script) {
  Group& g = t.consumer_groups.at(group);
  if (std::find(g.members.begin(), g.members.end(), member) == g.members.end()) {
    if (g.push) g.handlers[member] = Member{0, script, 0, false, {}};
    std::vector<std::string> members = g.members;
    members.push_back(member);
    rebalance(t, group, std::move(members));
  }
  return membership(t.name, group, member);
}

bool Model::leave_group(const std::string& topic, const std::string& group,
                        const std::string& member) {
  Topic& t = any_topic_or_throw(topic);
  const Group& g = group_or_throw(t, group);
  if (std::find(g.members.begin(), g.members.end(), member) == g.members.end()) return false;
  std::vector<std::string> members = g.members;
  std::erase(members, member);
  rebalance(t, group, std::move(members));
  t.consumer_groups.at(group).handlers.erase(member);
  return true;
}

Membership Model::membership(const std::string& topic, const std::string& group,
                             const std::string& member) const {
  const Group& g = group_or_throw(any_topic_or_throw(topic), group);
  auto it = g.assignment.find(member);
  if (it == g.assignment.end()) throw Error(ErrorCode::kUnknownSubscription);
  return Membership{g.generation, it->second};
}

// R32: one message from each of the member's partitions in turn, by R11, R22, R26 and R31
// on each partition's subscription.
std::vector<Received> Model::poll_group(const std::string& topic, const std::string& group,
                                        const std::string& member, Millis now, std::size_t max) {
  if (max == 0 || member.empty()) throw Error(ErrorCode::kInvalidArgument);
  if (group_or_throw(any_topic_or_throw(topic), group).push) throw Error(ErrorCode::kWrongKind);
  const Membership mine = membership(topic, group, member);
  std::vector<Topic*> parts = group_parts(any_topic_or_throw(topic));
  for (std::uint32_t p : mine.partitions) catch_up(*parts[p], pull_or_throw(*parts[p], group));
  std::vector<Received> out;
  for (bool took = true; took && out.size() < max;) {
    took = false;
    for (std::uint32_t p : mine.partitions) {
      if (out.size() >= max) break;
      Sub& s = pull_or_throw(*parts[p], group);
      if (s.paused || (s.max_in_flight != 0 && s.in_flight.size() >= s.max_in_flight)) continue;
      const std::optional<Offset> offset = next_message(*parts[p], s, now);
      if (!offset) continue;
      const Millis deadline = now + s.ack_timeout;
      const int attempt = offer(*parts[p], s, *offset, member, deadline);
      out.push_back(Received{*offset, parts[p]->log.at(*offset).payload, attempt, deadline,
                             parts[p]->name, mine.generation});
      took = true;
    }
  }
  for (std::uint32_t p : mine.partitions) {
    Sub& s = pull_or_throw(*parts[p], group);
    save(s, s.durable_attempts && !out.empty());  // R34: what it handed out, saved first
  }
  return out;
}

GroupStats Model::group_stats(const std::string& topic, const std::string& group) {
  const Topic& t = any_topic_or_throw(topic);
  const Group& g = group_or_throw(t, group);
  GroupStats out{g.generation, g.members, g.assignment, {}};
  std::vector<Topic*> parts = group_parts(t);
  for (std::uint32_t p = 0; p < parts.size(); ++p) {
    const Sub& s = group_sub(*parts[p], group);
    const Lag l = lag(parts[p]->name, group, now_);  // catches up first
    out.partitions.push_back(PartitionStats{p, parts[p]->name, s.owner ? s.owner->member : "",
                                            parts[p]->end, committed(s), l});
  }
  return out;
}

// Generators only.
std::vector<Model::GroupView> Model::consumer_groups() const {
  std::vector<GroupView> out;
  for (const Topic& t : topics_) {
    for (const auto& [name, g] : t.consumer_groups) {
      GroupView v{t.name,       name,   g.assignor,     g.options, g.members,
                  g.generation, g.push, g.push_options, {},        {}};
      v.push_options.script.clear();
      for (std::uint32_t p = 0; p < std::max<std::uint32_t>(1, t.partitions); ++p) {
        v.parts.push_back(t.partitions > 1 ? partition_name(t.name, p) : t.name);
        const Topic* part = nullptr;
        for (const Topic& u : topics_) {
          if (u.name == v.parts.back()) part = &u;
        }
        const Sub& s = group_sub(*part, name);
        v.owners.emplace_back(s.owner ? s.owner->member : "", s.owner ? s.owner->since : 0);
      }
      out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace model
