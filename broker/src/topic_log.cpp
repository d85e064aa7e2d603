#include "topic_log.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "broker/errors.h"
#include "storage/segment_log.h"

namespace broker {

TopicLog::TopicLog(TopicOptions options, std::shared_ptr<storage::SegmentLog> disk,
                   FsyncPolicy policy, const std::vector<std::uint32_t>& on_disk, Offset end)
    : options_(options),
      disk_(std::move(disk)),
      wait_durable_(policy.kind == FsyncPolicy::Kind::kAlways) {
  sync::MutexLock lock(mu_);
  base_ = end - on_disk.size();
  for (const std::uint32_t size : on_disk) {
    bytes_ += size;
    kept_.push_back({nullptr, size});
  }
  trim();
  visible_ = end;
}

void TopicLog::trim() {
  // Retention: drop the oldest, never refuse; the newest message is always kept.
  while (kept_.size() > 1 &&
         ((options_.retention_messages > 0 && kept_.size() > options_.retention_messages) ||
          (options_.retention_bytes > 0 && bytes_ > options_.retention_bytes))) {
    bytes_ -= kept_.front().size;
    kept_.pop_front();
    ++base_;
  }
}

Offset TopicLog::append(std::string payload, Headers headers, std::string key, Time now) {
  auto message = std::make_shared<Message>();
  message->payload = std::move(payload);
  message->headers = std::move(headers);
  message->key = std::move(key);
  message->publish_time = now;
  const std::size_t size = message->payload.size();
  Offset offset = 0;
  std::uint64_t ticket = 0;
  {
    sync::MutexLock lock(mu_);
    offset = base_ + kept_.size();
    message->offset = offset;
    if (disk_) {
      disk_->append(*message);  // the record is written in offset order, under mu_
      ticket = disk_->syncer().wrote();
    }
    kept_.push_back({std::move(message), size});
    bytes_ += size;
    trim();
    if (disk_) {
      try {
        disk_->drop_below(base_);
      } catch (const Error&) {
        // A segment that could not be removed now is removed by a later trim.
      }
    }
    if (!wait_durable_) {
      visible_ = base_ + kept_.size();
      if (waiters_ > 0) grown_.notify_all();
      return offset;
    }
  }
  disk_->syncer().wait(ticket);  // group commit: concurrent publishers share one sync
  sync::MutexLock lock(mu_);
  visible_ = std::max(visible_, offset + 1);
  if (waiters_ > 0) grown_.notify_all();
  return offset;
}

MessagePtr TopicLog::read(Offset offset) const {
  sync::MutexLock lock(mu_);
  if (offset < base_ || offset >= visible_) return nullptr;
  const Kept& k = kept_[offset - base_];
  return k.message ? k.message : disk_->read(offset);
}

Offset TopicLog::oldest() const {
  sync::MutexLock lock(mu_);
  return base_;
}

Offset TopicLog::end() const {
  sync::MutexLock lock(mu_);
  return std::max(visible_, base_);
}

bool TopicLog::wait_for_growth(Offset seen, Millis timeout) {
  sync::MutexLock lock(mu_);
  if (std::max(visible_, base_) > seen) return true;
  ++waiters_;
  grown_.wait_for(mu_, timeout);
  --waiters_;
  return std::max(visible_, base_) > seen;
}

Offset TopicLog::offset_for_time(Time time) const {
  // Publishers read the clock before they append, so times may step back between
  // neighbours: look at each, do not bisect. Retention may drop messages meanwhile; a
  // dropped one is not kept, so it is passed over.
  const Offset last = end();
  for (Offset o = oldest(); o < last; ++o) {
    MessagePtr m = read(o);
    if (m && m->publish_time >= time) return o;
  }
  return last;
}

}  // namespace broker
