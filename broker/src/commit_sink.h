// Where a durable subscription saves its position (SPEC R19); null for in-memory brokers.
#pragma once

#include <cstdint>
#include <map>
#include <memory_resource>
#include <string>
#include <vector>

#include "broker/message.h"
#include "broker/stats.h"

namespace broker {

/// Saves positions. Called under a subscription's mu (its lock is a leaf after that one);
/// wait() is called after that mu is released, so commits of many subscriptions share a
/// sync. Both may throw IoError.
class CommitSink {
 public:
  virtual ~CommitSink() = default;
  /// Writes a commit record; returns a ticket for wait(). `dead` are the dead letters since
  /// the previous commit, or with `dead_rewritten` all of them (R25 took some away).
  /// `force`: a control call (seek) whose record is synced whatever the commit policy.
  virtual std::uint64_t commit(const std::string& topic, const std::string& name, Offset position,
                               const std::pmr::map<Offset, int>& attempts,
                               const std::vector<DeadLetter>& dead, bool dead_rewritten,
                               bool force) = 0;
  /// Returns once ticket's record is as durable as the commit policy promises.
  virtual void wait(std::uint64_t ticket) = 0;
  /// R33: whether the storage has failed (then every commit throws IoError). Cheap: the
  /// dispatchers ask before each offer.
  [[nodiscard]] virtual bool failed() const = 0;
};

}  // namespace broker
