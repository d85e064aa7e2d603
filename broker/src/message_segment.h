// A run of consecutive messages stored together (issue 19): one allocation and one reference
// count for kCapacity messages instead of one each, freed whole once retention dropped all
// of them and no holder keeps one.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

#include "broker/message.h"

namespace broker {

/// kCapacity consecutive offsets from base(), filled in order by its log's writer under the
/// log's lock. Readers read a slot without a lock once the log's end (an acquire) is past it:
/// the writer fills a slot, and sets next(), before it moves the end past them (a release),
/// and never changes either again. A MessagePtr to a slot shares the segment's reference
/// count (the aliasing constructor), so a holder keeps the whole segment alive. Never throws
/// but std::bad_alloc from make().
class MessageSegment {
 public:
  static constexpr std::size_t kCapacity = 128;

  explicit MessageSegment(Offset base) : base_(base) {}
  ~MessageSegment() {
    for (std::size_t i = 0; i < filled_; ++i) slot(i)->~Message();
  }
  MessageSegment(const MessageSegment&) = delete;
  MessageSegment& operator=(const MessageSegment&) = delete;

  [[nodiscard]] Offset base() const { return base_; }
  /// Writer only (under the log's lock).
  [[nodiscard]] bool full() const { return filled_ == kCapacity; }
  /// Writer only: makes the next message in place and returns it (its offset is base() plus
  /// the slots filled before).
  Message& emplace() {
    Message* m = new (slot(filled_)) Message();
    ++filled_;
    return *m;
  }
  /// Writer only: destroys the message emplace() made last (its record could not be written).
  void unplace() {
    --filled_;
    slot(filled_)->~Message();
  }
  /// Writer only: links the segment that follows this one.
  void set_next(const std::shared_ptr<const MessageSegment>& next) { next_ = next; }

  /// Readers: the message at offset (in this segment, below the log's end).
  [[nodiscard]] const Message& at(Offset offset) const { return *slot(offset - base_); }
  /// Readers (past this segment, below the log's end): the next segment, or null once
  /// retention freed it (weak: a reader holding an old segment must not keep every later
  /// one alive through the chain).
  [[nodiscard]] std::shared_ptr<const MessageSegment> next() const { return next_.lock(); }

 private:
  Message* slot(std::size_t i) {
    return std::launder(reinterpret_cast<Message*>(storage_ + i * sizeof(Message)));
  }
  const Message* slot(std::size_t i) const {
    return std::launder(reinterpret_cast<const Message*>(storage_ + i * sizeof(Message)));
  }

  const Offset base_;
  // Written by the writer only; the destructor reads it after the last reference went (the
  // reference count's release/acquire orders it after every write).
  std::size_t filled_ = 0;
  std::weak_ptr<const MessageSegment> next_;
  alignas(Message) std::byte storage_[kCapacity * sizeof(Message)];
};

/// A reader's place in a log: the segment it read last, so the next read at or after it
/// needs no lock. Owned by one reader (guarded by whatever guards that reader).
struct LogCursor {
  std::shared_ptr<const MessageSegment> segment;
};

}  // namespace broker
