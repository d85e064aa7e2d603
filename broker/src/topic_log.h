// A topic's append-only log with absolute offsets and bounded retention.
#pragma once

#include <cstddef>
#include <deque>

#include "broker/message.h"
#include "broker/options.h"
#include "sync/sync.h"

namespace broker {

/// The messages of one topic. Thread-safe; its mutex is a leaf (nothing is locked under it
/// but the wait it offers). Readers get MessagePtr copies, so dropping old messages never
/// frees memory a holder still uses.
class TopicLog {
 public:
  explicit TopicLog(TopicOptions options) : options_(options) {}

  /// Appends and returns the new message's offset; drops the oldest beyond the bound.
  Offset append(std::string payload, Headers headers, std::string key, Time now) EXCLUDES(mu_);
  /// The message at offset, or null if it is not kept (dropped, or not yet published).
  [[nodiscard]] MessagePtr read(Offset offset) const EXCLUDES(mu_);
  /// First kept offset.
  [[nodiscard]] Offset oldest() const EXCLUDES(mu_);
  /// One past the newest offset.
  [[nodiscard]] Offset end() const EXCLUDES(mu_);
  /// Waits (real time) until end() > seen or timeout; returns whether it grew.
  bool wait_for_growth(Offset seen, Millis timeout) EXCLUDES(mu_);

 private:
  const TopicOptions options_;
  mutable sync::Mutex mu_;
  sync::CondVar grown_;
  std::deque<MessagePtr> kept_ GUARDED_BY(mu_);  // kept_[i] has offset base_ + i
  Offset base_ GUARDED_BY(mu_) = 0;
  std::size_t bytes_ GUARDED_BY(mu_) = 0;
  std::size_t waiters_ GUARDED_BY(mu_) = 0;
};

}  // namespace broker
