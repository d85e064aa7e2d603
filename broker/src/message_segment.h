// A run of consecutive messages stored together (issue 19): one allocation and one reference
// count for up to kMaxCapacity messages instead of one each, freed whole once retention dropped all
// of them and no holder keeps one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "broker/message.h"

namespace broker {

/// capacity() consecutive offsets from base(), filled in order by its log's writer under the
/// log's lock. Readers read a slot without a lock once the log's end (an acquire) is past it:
/// the writer fills a slot, and sets next(), before it moves the end past them (a release),
/// and never changes either again (the slots never move: their storage is reserved whole
/// at construction). A MessagePtr to a slot shares the segment's reference count (the
/// aliasing constructor), so a holder keeps the whole segment alive. Throws std::bad_alloc
/// only.
class MessageSegment {
 public:
  /// A log's first segment holds kFirstCapacity messages, each next one twice as many as
  /// the one before, up to kMaxCapacity: a small topic costs little, a busy one pays one
  /// allocation and one reference count per kMaxCapacity messages.
  static constexpr std::size_t kFirstCapacity = 4;
  static constexpr std::size_t kMaxCapacity = 256;

  MessageSegment(Offset base, std::size_t capacity) : base_(base) { slots_.reserve(capacity); }
  MessageSegment(const MessageSegment&) = delete;
  MessageSegment& operator=(const MessageSegment&) = delete;

  [[nodiscard]] Offset base() const { return base_; }
  /// One past the last offset it can hold.
  [[nodiscard]] Offset limit() const { return base_ + slots_.capacity(); }
  /// The capacity of the segment after this one.
  [[nodiscard]] std::size_t next_capacity() const {
    return std::min(kMaxCapacity, 2 * slots_.capacity());
  }
  /// Writer only (under the log's lock).
  [[nodiscard]] bool full() const { return slots_.size() == slots_.capacity(); }
  /// Writer only: makes the next message in place (never moving the others) and returns it.
  Message& emplace() { return slots_.emplace_back(); }
  /// Writer only: destroys the message emplace() made last (its record could not be written).
  void unplace() { slots_.pop_back(); }
  /// Writer only: links the segment that follows this one.
  void set_next(const std::shared_ptr<const MessageSegment>& next) { next_ = next; }

  /// Readers: the message at offset (in this segment, below the log's end). Reads the
  /// storage's start only, which the writer never changes after construction.
  [[nodiscard]] const Message& at(Offset offset) const { return slots_.data()[offset - base_]; }
  /// Readers (past this segment, below the log's end): the next segment, or null once
  /// retention freed it (weak: a reader holding an old segment must not keep every later
  /// one alive through the chain).
  [[nodiscard]] std::shared_ptr<const MessageSegment> next() const { return next_.lock(); }

 private:
  const Offset base_;
  std::vector<Message> slots_;  // reserved whole: emplace never reallocates
  std::weak_ptr<const MessageSegment> next_;
};

/// A reader's place in a log: the segment it read last, so the next read at or after it
/// needs no lock. Owned by one reader (guarded by whatever guards that reader).
struct LogCursor {
  std::shared_ptr<const MessageSegment> segment;
};

}  // namespace broker
