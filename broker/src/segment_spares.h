// Buffers of freed full-size log segments kept for the log's next segments, so a
// log that rolls reuses memory instead of allocating a segment each time.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "sync/sync.h"

namespace broker {

/// Up to kMax buffers of MessageSegment::kMaxBytes that a log's freed segments left, handed
/// to its next segments instead of fresh memory: a log bounded by retention frees a
/// segment and needs a new one every kMaxBytes of records, and fresh memory is a page fault
/// per page and the kernel's zeroing (on a VM that gives free pages back to its host, the
/// host's provisioning too: 75-120 MB/s here). A buffer comes here only from a segment's
/// destructor, so nobody holds a message in it any more. Thread-safe: its mutex is a leaf
/// (taken under the log's lock by the writer, and under any lock by whoever drops a
/// segment's last reference). Throws nothing.
template <class Buffer>
class SegmentSpares {
 public:
  static constexpr std::size_t kMax = 2;

  /// A spare buffer, or an empty one if there is none.
  Buffer take() EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    if (spares_.empty()) return Buffer{};
    Buffer b = std::move(spares_.back());
    spares_.pop_back();
    return b;
  }

  /// Keeps `b` if there is room; else leaves it to its owner (who frees it).
  void give(Buffer& b) EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    if (spares_.size() < kMax) spares_.push_back(std::move(b));
  }

 private:
  sync::Mutex mu_;
  // Reserved up front, so give never allocates (it runs in destructors).
  std::vector<Buffer> spares_ GUARDED_BY(mu_) = reserved();

  static std::vector<Buffer> reserved() {
    std::vector<Buffer> v;
    v.reserve(kMax);
    return v;
  }
};

}  // namespace broker
