// The broker's topics by name, read on every publish, poll and ack: sharded, so readers of
// different topics share no lock (no broker-wide lock on the hot path).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sync/sync.h"

namespace broker {

class Topic;

/// Name -> topic. Thread-safe: each shard has its own mutex, a leaf (nothing is locked
/// under it); a change of several names locks their shards in ascending order, so a
/// reader sees a topic and its partitions appear (and go) at once. Writers are serialized
/// by the caller (BrokerImpl::mu_); readers take one shard's mutex only. Throws only
/// std::bad_alloc.
class TopicTable {
 public:
  /// The topic called name, or null. Locks name's shard.
  [[nodiscard]] std::shared_ptr<Topic> find(const std::string& name) const {
    const Shard& s = shard_of(name);
    sync::MutexLock lock(s.mu);
    auto it = s.topics.find(name);
    return it == s.topics.end() ? nullptr : it->second;
  }
  /// Whether a topic is called name. Locks name's shard.
  [[nodiscard]] bool contains(const std::string& name) const { return find(name) != nullptr; }
  /// Adds every (name, topic) at once. Locks their shards, ascending.
  void insert_all(const std::vector<std::pair<std::string, std::shared_ptr<Topic>>>& topics)
      NO_THREAD_SAFETY_ANALYSIS {  // the shards are held by `locked` (a dynamic set)
    std::vector<std::string> names;
    for (const auto& [name, t] : topics) names.push_back(name);
    Locked locked(*this, names);
    for (const auto& [name, t] : topics) shards_[index_of(name)].topics[name] = t;
  }
  /// Removes every name at once. Locks their shards, ascending.
  void erase_all(const std::vector<std::string>& names) NO_THREAD_SAFETY_ANALYSIS {
    Locked locked(*this, names);
    for (const std::string& n : names) shards_[index_of(n)].topics.erase(n);
  }

 private:
  static constexpr std::size_t kShards = 16;
  // A cache line each, so two readers of different shards never write one line.
  struct alignas(64) Shard {
    mutable sync::Mutex mu;
    std::map<std::string, std::shared_ptr<Topic>, std::less<>> topics GUARDED_BY(mu);
  };

  /// Holds the shards of some names, ascending, for one change.
  class Locked {
   public:
    Locked(TopicTable& table, const std::vector<std::string>& names) NO_THREAD_SAFETY_ANALYSIS {
      for (const std::string& n : names) indexes_.push_back(index_of(n));
      std::sort(indexes_.begin(), indexes_.end());
      indexes_.erase(std::unique(indexes_.begin(), indexes_.end()), indexes_.end());
      for (std::size_t i : indexes_) table.shards_[i].mu.lock();
      table_ = &table;
    }
    ~Locked() NO_THREAD_SAFETY_ANALYSIS {
      for (auto it = indexes_.rbegin(); it != indexes_.rend(); ++it) {
        table_->shards_[*it].mu.unlock();
      }
    }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

   private:
    TopicTable* table_ = nullptr;
    std::vector<std::size_t> indexes_;
  };

  // FNV-1a: names are short, and a shard holds few topics (a std::map of a few compares),
  // so a lookup costs about what the single map it replaced did.
  static std::size_t index_of(const std::string& name) {
    std::uint32_t h = 2166136261u;
    for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h % kShards;
  }
  const Shard& shard_of(const std::string& name) const { return shards_[index_of(name)]; }

  Shard shards_[kShards];
};

}  // namespace broker
