// Topics, publishing and name lookups (R1, R2, R3).
#include <algorithm>

#include "model/model.h"

namespace model {

Model::Topic* Model::find_topic(const std::string& name) {
  for (Topic& t : topics_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Model::Topic* Model::find_topic(std::uint64_t id) {
  for (Topic& t : topics_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

Model::Topic& Model::any_topic_or_throw(const std::string& name) {
  Topic* t = find_topic(name);
  if (t == nullptr) throw Error(ErrorCode::kUnknownTopic);
  return *t;
}

const Model::Topic& Model::any_topic_or_throw(const std::string& name) const {
  return const_cast<Model*>(this)->any_topic_or_throw(name);
}

// R29: a partitioned topic has no log of its own: a call that reads or subscribes names
// one of its partitions.
Model::Topic& Model::topic_or_throw(const std::string& name) {
  Topic& t = any_topic_or_throw(name);
  if (t.partitions > 1) throw Error(ErrorCode::kWrongKind);
  return t;
}

const Model::Topic& Model::topic_or_throw(const std::string& name) const {
  return const_cast<Model*>(this)->topic_or_throw(name);
}

// R4, R10: a name is a push subscription (or a group member) or a pull subscription.
Model::Sub* Model::find_sub(Topic& t, const std::string& name) {
  if (auto it = t.members.find(name); it != t.members.end()) return &t.subs.at(it->second.sub_id);
  if (auto it = t.pulls.find(name); it != t.pulls.end()) return &t.subs.at(it->second);
  if (auto it = t.dormant.find(name); it != t.dormant.end()) return &t.subs.at(it->second);
  if (auto it = t.consumer_pushes.find(name); it != t.consumer_pushes.end()) {
    return &t.subs.at(it->second);
  }
  return nullptr;
}

// R10, R12, R13: where a call reads or moves a position, a subscription's (or member's)
// name first, else a push group's name.
Model::Sub& Model::position_or_throw(Topic& t, const std::string& name) {
  if (Sub* s = find_sub(t, name)) return *s;
  auto g = t.groups.find(name);
  if (g == t.groups.end()) throw Error(ErrorCode::kUnknownSubscription);
  return t.subs.at(g->second);
}

// R1: a non-empty, unused name makes an empty topic. R29: with partitions > 1, also its
// partitions "name-0".."name-(n-1)" right after it, each a topic with the same retention;
// every one of those names must be free.
void Model::create_topic(const std::string& name, std::size_t retention_messages,
                         std::size_t retention_bytes, std::uint32_t partitions,
                         Partitioner partitioner) {
  if (name.empty() || partitions == 0 || partitions > kMaxPartitions) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  std::vector<Topic> made(partitions > 1 ? partitions + 1 : 1);
  for (std::size_t i = 0; i < made.size(); ++i) {
    Topic& t = made[i];
    t.name = i == 0 ? name : partition_name(name, i - 1);
    if (find_topic(t.name) != nullptr) throw Error(ErrorCode::kDuplicateTopic);
    t.retention_messages = retention_messages;
    t.retention_bytes = retention_bytes;
    if (i > 0) t.parent = name;
  }
  made[0].partitions = partitions;
  made[0].partitioner = partitioner;
  for (Topic& t : made) {
    t.id = next_id_++;
    topics_.push_back(std::move(t));
  }
}

// R1: the same topic again is no error; the name with anything else is.
bool Model::create_topic_if_absent(const std::string& name, std::size_t retention_messages,
                                   std::size_t retention_bytes, std::uint32_t partitions,
                                   Partitioner partitioner) {
  if (name.empty() || partitions == 0 || partitions > kMaxPartitions) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  if (const Topic* t = find_topic(name)) {
    // A topic without partitions has no use for a partitioner.
    const bool same = t->parent.empty() && t->retention_messages == retention_messages &&
                      t->retention_bytes == retention_bytes && t->partitions == partitions &&
                      (partitions == 1 || t->partitioner == partitioner);
    if (!same) throw Error(ErrorCode::kOptionsMismatch);
    return false;
  }
  create_topic(name, retention_messages, retention_bytes, partitions, partitioner);
  return true;
}

// R1: only a topic without subscriptions can be deleted. R29: a partitioned topic goes with
// its partitions, none of which may have subscriptions; a partition alone cannot go.
void Model::delete_topic(const std::string& name) {
  Topic& t = any_topic_or_throw(name);
  if (!t.parent.empty()) throw Error(ErrorCode::kWrongKind);
  for (const Topic& x : topics_) {
    if ((x.name == name || x.parent == name) && !x.order.empty()) {
      throw Error(ErrorCode::kTopicInUse);
    }
  }
  std::erase_if(topics_, [&name](const Topic& x) { return x.name == name || x.parent == name; });
}

// R1: names in creation order.
std::vector<std::string> Model::topics() const {
  std::vector<std::string> names;
  for (const Topic& t : topics_) names.push_back(t.name);
  return names;
}

Offset Model::publish(const std::string& topic, const std::string& payload, const Headers& headers,
                      const std::string& key) {
  return send(topic, payload, headers, key).offset;
}

// R29: a keyed message goes where the topic's partitioner says, a keyless one to the next
// partition in turn; a topic without partitions is its own partition 0.
Placement Model::send(const std::string& topic, const std::string& payload, const Headers& headers,
                      const std::string& key) {
  Topic& t = any_topic_or_throw(topic);
  std::uint32_t p = 0;
  if (t.partitions > 1) p = key.empty() ? t.round_robin++ % t.partitions : partition_of(t, key);
  return {p, publish_to(topic, p, payload, headers, key)};
}

// R2: append at the next offset, stamped with the clock; then retention (R3).
Offset Model::publish_to(const std::string& topic, std::uint32_t partition,
                         const std::string& payload, const Headers& headers,
                         const std::string& key) {
  const Topic& named = any_topic_or_throw(topic);
  if (partition >= named.partitions) throw Error(ErrorCode::kPartitionOutOfRange);
  Topic& t =
      named.partitions > 1 ? topic_or_throw(partition_name(topic, partition)) : *find_topic(topic);
  const Offset offset = t.end++;
  t.log[offset] = Message{offset, payload, headers, key, now_};
  apply_retention(t);
  if (profile_.retention_terminates_held) terminate_dropped(t, now_);
  return offset;
}

std::uint32_t Model::partitions(const std::string& topic) const {
  return any_topic_or_throw(topic).partitions;
}

Offset Model::end_offset(const std::string& topic) const {
  const Topic& named = any_topic_or_throw(topic);
  if (named.partitions <= 1) return named.end;
  Offset total = 0;
  for (std::uint32_t p = 0; p < named.partitions; ++p) {
    total += topic_or_throw(partition_name(topic, p)).end;
  }
  return total;
}

Offset Model::oldest_offset(const std::string& topic) const {
  return oldest(topic_or_throw(topic));
}

// Subscription names in subscription order (a group lists its members in join order; a
// consumer group's partition subscription goes by the group's name, R32).
std::vector<std::string> Model::subscriptions(const std::string& topic) const {
  const Topic& t = topic_or_throw(topic);
  std::vector<std::string> names;
  for (std::uint64_t id : t.order) {
    const Sub& s = t.subs.at(id);
    if (s.pull) {
      for (const auto& [name, sid] : t.pulls) {
        if (sid == id) names.push_back(name);
      }
    } else if (s.members.empty() || s.owner) {
      names.push_back(s.name);  // R20: not resumed yet; R32: a consumer group's, by its name
    } else {
      names.insert(names.end(), s.members.begin(), s.members.end());
    }
  }
  return names;
}

std::vector<HandlerCall> Model::take_calls() {
  std::vector<HandlerCall> out;
  out.swap(calls_);
  return out;
}

}  // namespace model
