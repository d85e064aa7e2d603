// A run of consecutive messages stored together: one allocation and one reference
// count for up to kMaxBytes of records instead of one each, freed whole once retention
// dropped all of them and no holder keeps one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "broker/message.h"
#include "message_record.h"
#include "segment_spares.h"
#include "sync/sync.h"

namespace broker {

/// A slotted page of records: consecutive offsets from base(), their records packed from
/// the front of one allocation (each a Message, message.h), a sparse index of their
/// positions growing from the back. Written in order by its log's writer under the log's
/// lock; readers read a record without a lock once the log's end (an acquire) is past it:
/// the writer writes a record and its index entry, and seals the segment (limit, next)
/// before it moves the end past them (a release), and never changes either again. A
/// MessagePtr to a record shares the segment's reference count (the aliasing constructor),
/// so a holder keeps the whole segment alive. Throws std::bad_alloc only.
class MessageSegment {
 public:
  /// A log's first segment has kFirstBytes, each next one twice as many as the one before,
  /// up to kMaxBytes (or one record's size if larger): a small topic costs little, a busy
  /// one pays one allocation and one reference count per kMaxBytes of records, and one page
  /// fault (segments of kMaxBytes are on a transparent huge page where the system allows).
  static constexpr std::size_t kFirstBytes = 512;
  static constexpr std::size_t kMaxBytes = std::size_t{2} << 20;
  /// Every kIndexEvery-th record has an index entry (4 bytes): a read walks past at most
  /// kIndexEvery - 1 records, and a 64-byte message costs one byte of index.
  static constexpr std::size_t kIndexEvery = 4;

  /// Gives back what allocate took: unmaps `mapped` bytes, or frees a malloc'd block.
  struct Free {
    // Constructors, not a member initializer: with one, a nested class is not default
    // constructible (for unique_ptr's traits) until MessageSegment is complete.
    Free() noexcept : mapped(0) {}
    explicit Free(std::size_t bytes) noexcept : mapped(bytes) {}
    std::size_t mapped;
    void operator()(unsigned char* p) const;
  };
  using Bytes = std::unique_ptr<unsigned char, Free>;
  using Spares = SegmentSpares<Bytes>;

  /// A segment of `bytes` (a spare's buffer if it has kMaxBytes and `spares` has one); when
  /// it is destroyed (nobody holds a message in it) a kMaxBytes buffer goes to `spares`.
  MessageSegment(Offset base, std::size_t bytes, std::shared_ptr<Spares> spares = nullptr)
      : base_(base), capacity_(bytes), spares_(std::move(spares)), bytes_(obtain(bytes)) {}
  ~MessageSegment() {
    if (spares_ && capacity_ == kMaxBytes) spares_->give(bytes_);
  }
  MessageSegment(const MessageSegment&) = delete;
  MessageSegment& operator=(const MessageSegment&) = delete;

  /// The bytes a segment after `last` (null: none) needs to hold, at least, a record of
  /// `record` bytes.
  static std::size_t bytes_after(const MessageSegment* last, std::size_t record) {
    const std::size_t grown = last ? std::min(kMaxBytes, 2 * last->capacity_) : kFirstBytes;
    return std::max(grown, record + sizeof(std::uint32_t));
  }

  [[nodiscard]] Offset base() const { return base_; }
  /// One past the last offset it holds once sealed (the next segment's base); the largest
  /// Offset before. Acquire: a reader that sees the seal also sees next().
  [[nodiscard]] Offset limit() const { return limit_.load(std::memory_order_acquire); }

  /// Writer only (under the log's lock): room for a record of `size` bytes and, if it is
  /// due one, its index entry.
  [[nodiscard]] bool fits(std::size_t size) const {
    return used_ + size + sizeof(std::uint32_t) * entries(count_ + 1) <= capacity_;
  }
  /// Writer only: where the next record goes (fits(size) holds); it counts once committed.
  /// Claims the cache lines kClaimAhead bytes on for writing: a store to a line another
  /// core holds waits for it, and every store behind it in the store buffer waits too; a
  /// consumer reading close behind the writer (and its core's prefetcher, which reads
  /// ahead of it) holds the lines around the write position, so the writer asks for the
  /// lines of the records after this one while it writes this one, and the transfers
  /// overlap instead of stalling one store each (BENCHMARKS.md, a lane on another CPU).
  [[nodiscard]] unsigned char* reserve() {
    unsigned char* at = bytes_.get() + used_;
    if (used_ + kClaimAhead + 2 * 64 <= capacity_) {
      prefetch_for_write(at + kClaimAhead);
      prefetch_for_write(at + kClaimAhead + 64);
    }
    return at;
  }
  /// Writer only: the record written at reserve(), `size` bytes, is the next offset's.
  void commit(std::size_t size) {
    if (count_ % kIndexEvery == 0) {
      const auto position = static_cast<std::uint32_t>(used_);
      std::memcpy(entry(count_ / kIndexEvery), &position, sizeof position);
    }
    sync::note_written(bytes_.get() + used_, size, "a record");
    used_ += size;
    ++count_;
  }
  /// Writer only: seals it (no record is added any more) and links the segment after it.
  void seal(const std::shared_ptr<const MessageSegment>& next) {
    next_ = next;
    sync::note_written(&next_, sizeof next_, "a segment's link to the next");
    // Release: a reader that acquires the limit also sees next_ (and the records below it,
    // written before). Relaxed would let it see the limit and an empty next_.
    limit_.store(base_ + count_, std::memory_order_release);
  }

  /// Readers: the message at offset (in this segment, below the log's end).
  [[nodiscard]] const Message& at(Offset offset) const {
    const std::size_t i = offset - base_;
    std::uint32_t position;
    std::memcpy(&position, entry(i / kIndexEvery), sizeof position);
    const Message* m = &record::at(bytes_.get() + position);
    for (std::size_t k = i % kIndexEvery; k > 0; --k) m = &after(*m);
    sync::note_read(m, m->record().size(), "a record");
    return *m;
  }
  /// Readers: the message after `m`, one of this segment's whose next offset is in it too
  /// (below limit() and the log's end). Reads only m's record and the next one, not the
  /// index: a reader going through the log in order leaves the index's cache line, which
  /// the writer stores into every kIndexEvery-th append, to the writer.
  [[nodiscard]] static const Message& after(const Message& m) {
    const Message& next =
        record::at(reinterpret_cast<const unsigned char*>(&m) + m.record().size());
    sync::note_read(&next, next.record().size(), "a record");
    return next;
  }
  /// Readers (past limit(), below the log's end): the next segment, or null once retention
  /// freed it (weak: a reader holding an old segment must not keep every later one alive
  /// through the chain).
  [[nodiscard]] std::shared_ptr<const MessageSegment> next() const {
    sync::note_read(&next_, sizeof next_, "a segment's link to the next");
    return next_.lock();
  }

 private:
  /// A spare buffer for a kMaxBytes segment, else allocate(bytes). Throws std::bad_alloc.
  Bytes obtain(std::size_t bytes);
  /// `bytes` of storage; from kMaxBytes on (on Linux) mapped, aligned to kMaxBytes and
  /// advised as huge pages, so a write to a fresh segment faults once, not once per 4 KiB.
  /// Throws std::bad_alloc.
  static Bytes allocate(std::size_t bytes);

  /// How far past the write position reserve() claims two cache lines: the records after
  /// the next two or three (4 lines measured best here, 2 and 16 worse).
  static constexpr std::size_t kClaimAhead = 256;
  /// A hint that the calling thread will write the line at p soon: asks for it exclusive
  /// (prefetchw) where the CPU has that, else as __builtin_prefetch for writing does. Never
  /// faults, changes no memory.
  static void prefetch_for_write(const unsigned char* p) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetchw %0" : : "m"(*p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
  }

  static std::size_t entries(std::size_t records) {
    return (records + kIndexEvery - 1) / kIndexEvery;
  }
  [[nodiscard]] unsigned char* entry(std::size_t k) const {
    return bytes_.get() + capacity_ - sizeof(std::uint32_t) * (k + 1);
  }

  // What readers read: written before any reader has the segment, or (next_, limit_) once.
  const Offset base_;
  const std::size_t capacity_;
  const std::shared_ptr<Spares> spares_;  // before bytes_: obtain reads it
  Bytes bytes_;  // records from the front, index from the back; to spares_ when destroyed
  std::weak_ptr<const MessageSegment> next_;
  sync::Atomic<Offset> limit_{std::numeric_limits<Offset>::max()};
  // The writer's, changed at every append: a cache line of their own, so that a reader's
  // look at limit_ (at every read) does not pull the line back from the writer each time.
  alignas(64) std::size_t used_ = 0;  // record bytes
  std::size_t count_ = 0;             // records
};

/// A reader's place in a log: the segment it read last, so the next read at or after it
/// needs no lock, and the message it read last there, so a read of the offset after it
/// steps to the next record (MessageSegment::after). Owned by one reader (guarded by
/// whatever guards that reader).
struct LogCursor {
  std::shared_ptr<const MessageSegment> segment;
  const Message* last = nullptr;  // in segment; null: none
};

}  // namespace broker
