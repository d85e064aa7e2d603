#include "topic_log.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "broker/errors.h"
#include "message_record.h"
#include "storage/segment_log.h"

namespace broker {

TopicLog::TopicLog(TopicOptions options, std::shared_ptr<storage::SegmentLog> disk,
                   FsyncPolicy policy, const std::vector<std::uint32_t>& on_disk, Offset end)
    : options_(options),
      disk_(std::move(disk)),
      wait_durable_(policy.kind == FsyncPolicy::Kind::kAlways),
      in_memory_from_(end) {
  sync::SpinLockHold lock(mu_);
  base_ = end - on_disk.size();
  next_ = end;
  for (const std::uint32_t size : on_disk) {
    bytes_ += size;
    disk_sizes_.push_back(size);
  }
  trim();
  visible_ = end;
  publish_bounds();
}

void TopicLog::publish_bounds() {
  oldest_.store(base_, std::memory_order_release);
  end_.store(std::max(visible_, base_), std::memory_order_release);
}

std::size_t TopicLog::payload_size(Offset offset) const {
  if (offset < in_memory_from_) return disk_sizes_[disk_sizes_.size() - (in_memory_from_ - offset)];
  return locate(offset, nullptr)->payload().size();
}

void TopicLog::trim() {
  // Retention: drop the oldest, never refuse; the newest message is always kept.
  while (next_ - base_ > 1 &&
         ((options_.retention_messages > 0 && next_ - base_ > options_.retention_messages) ||
          (options_.retention_bytes > 0 && bytes_ > options_.retention_bytes))) {
    // Only a bound in bytes reads the size (a lookup in the segments) of what it drops.
    if (options_.retention_bytes > 0) bytes_ -= payload_size(base_);
    ++base_;
  }
  while (disk_sizes_.size() > (base_ < in_memory_from_ ? in_memory_from_ - base_ : 0)) {
    disk_sizes_.pop_front();
  }
  // Whole segments only: a holder of one of its messages keeps the rest of it anyway.
  while (!segments_.empty() && segments_.front()->limit() <= base_) segments_.pop_front();
}

TopicLog::Appended TopicLog::append(std::string_view payload, const Headers& headers,
                                    std::string_view key, Time now) {
  const std::size_t size = record::size_of(payload, headers, key);
  Offset offset = 0;
  std::uint64_t ticket = 0;
  Appended appended;
  bool waiting = false;  // a wait_for_growth was counted when the message became readable
  {
    sync::SpinLockHold lock(mu_);
    offset = next_;
    if (segments_.empty() || !segments_.back()->fits(size)) {
      // Retention keeps the newest message, so only a log that never held one in memory (new,
      // or all on disk after a restart) has no segment to grow from.
      const MessageSegment* last = segments_.empty() ? nullptr : segments_.back().get();
      auto segment = std::make_shared<MessageSegment>(
          offset, MessageSegment::bytes_after(last, size), spares_);
      if (!segments_.empty()) segments_.back()->seal(segment);
      segments_.push_back(std::move(segment));
    }
    MessageSegment& segment = *segments_.back();
    unsigned char* at = segment.reserve();
    record::write(at, offset, now, payload, headers, key);
    if (disk_) {
      // The record is written in offset order, under mu_; not committed (nothing appended)
      // if that throws.
      disk_->append(record::at(at));
      ticket = disk_->syncer().wrote();
    }
    segment.commit(size);
    ++next_;
    bytes_ += payload.size();
    trim();
    // Under `always`, old segments go once this record is durable: a publish that throws
    // must not have dropped what it would have pushed out (R33).
    if (disk_ && !wait_durable_) drop_segments();
    if (!wait_durable_) {
      visible_ = next_;
      publish_bounds();
      // Under mu_, as readable: a sleeper registered before is seen, one after sees the end.
      appended = {offset, sleepers_.load(std::memory_order_relaxed) > 0};
      waiting = waiters_ > 0;
    } else {
      publish_bounds();  // trim may have dropped some
    }
  }
  if (wait_durable_) {
    disk_->syncer().wait(ticket);  // group commit: concurrent publishers share one sync
    sync::SpinLockHold lock(mu_);
    visible_ = std::max(visible_, offset + 1);
    drop_segments();
    publish_bounds();
    appended = {offset, sleepers_.load(std::memory_order_relaxed) > 0};
    waiting = waiters_ > 0;
  }
  if (waiting) {
    // A waiter counted under mu_ holds wait_mu_ until it waits: this notify finds it waiting.
    sync::MutexLock lock(wait_mu_);
    grown_.notify_all();
  }
  return appended;
}

void TopicLog::discard_disk() {
  if (disk_) disk_->discard();
}

void TopicLog::drop_segments() {
  try {
    disk_->drop_below(base_);
  } catch (const Error&) {
    // The store has failed (R33): nothing more is written until a reopen, whose retention
    // drops the segment again.
  }
}

MessagePtr TopicLog::locate(Offset offset, std::shared_ptr<const MessageSegment>* segment) const {
  // The last segment whose base is at or below offset (bases ascend).
  auto it = std::upper_bound(segments_.begin(), segments_.end(), offset,
                             [](Offset o, const auto& s) { return o < s->base(); });
  std::shared_ptr<const MessageSegment> s = *std::prev(it);
  MessagePtr message(s, &s->at(offset));
  if (segment != nullptr) *segment = std::move(s);
  return message;
}

MessagePtr TopicLog::read(Offset offset) const {
  sync::SpinLockHold lock(mu_);
  if (offset < base_ || offset >= visible_) return nullptr;
  if (offset < in_memory_from_) return disk_->read(offset);
  return locate(offset, nullptr);
}

MessagePtr TopicLog::read_at(LogCursor& cursor, Offset offset) const {
  // Lock-free: the record is below end (acquire), so written and never changed again, and the
  // segment is alive (held by cursor). A drop after the oldest() look is ordered after this
  // read, as if it came a moment later.
  // A segment that offset (below end) is past was sealed before end passed offset, so its
  // limit is seen here.
  if (offset >= end() || offset < oldest()) return nullptr;
  return read_seen(cursor, offset);
}

MessagePtr TopicLog::read_seen(LogCursor& cursor, Offset offset) const {
  // Lock-free as read_at: offset was below end when the reader looked, so its record is
  // written and stays unchanged, and the segments from the cursor's on are alive or gone.
  if (cursor.segment && offset >= cursor.segment->base()) {
    while (offset >= cursor.segment->limit()) {
      std::shared_ptr<const MessageSegment> next = cursor.segment->next();
      if (!next) break;  // freed by retention: look it up below
      cursor.segment = std::move(next);
      cursor.last = nullptr;
    }
    if (offset < cursor.segment->limit()) {
      // The offset after the cursor's last message (last is reset whenever the segment
      // changes, so it is this segment's): step there.
      const bool next = cursor.last != nullptr && offset == cursor.last->offset() + 1;
      cursor.last = next ? &MessageSegment::after(*cursor.last) : &cursor.segment->at(offset);
      return MessagePtr(cursor.segment, cursor.last);
    }
  }
  sync::SpinLockHold lock(mu_);
  if (offset < base_ || offset >= visible_) return nullptr;
  if (offset < in_memory_from_) return disk_->read(offset);
  cursor.last = nullptr;
  return locate(offset, &cursor.segment);
}

std::uint64_t TopicLog::wakes() const {
  sync::MutexLock lock(wait_mu_);
  return wakes_;
}

void TopicLog::wait_for_growth(Offset seen, std::uint64_t wakes, Millis timeout) {
  // wait_mu_ from the look to the wait: an append that counts this waiter (under mu_), and
  // a wake_waiters, take wait_mu_ to notify, so neither can notify between look and wait.
  sync::MutexLock wait_lock(wait_mu_);
  if (wakes_ != wakes) return;
  {
    sync::SpinLockHold lock(mu_);
    if (std::max(visible_, base_) > seen) return;
    ++waiters_;
  }
  grown_.wait_for(wait_mu_, timeout);
  sync::SpinLockHold lock(mu_);
  --waiters_;
}

void TopicLog::wake_waiters() {
  sync::MutexLock lock(wait_mu_);
  ++wakes_;
  grown_.notify_all();
}

Offset TopicLog::offset_for_time(Time time) const {
  // Publishers read the clock before they append, so times may step back between
  // neighbours: look at each, do not bisect. Retention may drop messages meanwhile; a
  // dropped one is not kept, so it is passed over.
  const Offset last = end();
  LogCursor cursor;
  for (Offset o = oldest(); o < last; ++o) {
    MessagePtr m = read_at(cursor, o);
    if (m && m->publish_time() >= time) return o;
  }
  return last;
}

}  // namespace broker
