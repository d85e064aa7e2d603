#include "topic_log.h"

#include <memory>
#include <utility>

namespace broker {

Offset TopicLog::append(std::string payload, Headers headers, std::string key, Time now) {
  auto message = std::make_shared<Message>();
  message->payload = std::move(payload);
  message->headers = std::move(headers);
  message->key = std::move(key);
  message->publish_time = now;
  const std::size_t size = message->payload.size();
  sync::MutexLock lock(mu_);
  const Offset offset = base_ + kept_.size();
  message->offset = offset;
  kept_.push_back(std::move(message));
  bytes_ += size;
  // Retention: drop the oldest, never refuse; the newest message is always kept.
  while (kept_.size() > 1 &&
         ((options_.retention_messages > 0 && kept_.size() > options_.retention_messages) ||
          (options_.retention_bytes > 0 && bytes_ > options_.retention_bytes))) {
    bytes_ -= kept_.front()->payload.size();
    kept_.pop_front();
    ++base_;
  }
  if (waiters_ > 0) grown_.notify_all();
  return offset;
}

MessagePtr TopicLog::read(Offset offset) const {
  sync::MutexLock lock(mu_);
  if (offset < base_ || offset >= base_ + kept_.size()) return nullptr;
  return kept_[offset - base_];
}

Offset TopicLog::oldest() const {
  sync::MutexLock lock(mu_);
  return base_;
}

Offset TopicLog::end() const {
  sync::MutexLock lock(mu_);
  return base_ + kept_.size();
}

bool TopicLog::wait_for_growth(Offset seen, Millis timeout) {
  sync::MutexLock lock(mu_);
  if (base_ + kept_.size() > seen) return true;
  ++waiters_;
  grown_.wait_for(mu_, timeout);
  --waiters_;
  return base_ + kept_.size() > seen;
}

}  // namespace broker
