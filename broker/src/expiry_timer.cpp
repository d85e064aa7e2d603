#include "expiry_timer.h"

#include <algorithm>
#include <utility>

namespace broker {

ExpiryTimer::ExpiryTimer(std::shared_ptr<const Clock> clock, Millis period, Expire expire)
    : clock_(std::move(clock)),
      period_(period),
      expire_(std::move(expire)),
      thread_([this] { run(); }) {}

ExpiryTimer::~ExpiryTimer() {
  {
    sync::MutexLock lock(mu_);
    stop_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void ExpiryTimer::arm(Time deadline) {
  sync::MutexLock lock(mu_);
  if (next_ && *next_ <= deadline) return;
  next_ = deadline;
  wake_.notify_all();
}

void ExpiryTimer::run() {
  Millis last_run = sync::steady_now();
  for (;;) {
    const Time now = clock_->now();  // user code (a Clock): never under the lock
    const Millis real = sync::steady_now();
    {
      sync::MutexLock lock(mu_);
      if (stop_) return;
      const bool deadline_passed = next_ && *next_ <= now;
      if (!deadline_passed && real - last_run < period_) {
        Millis wait = period_ - (real - last_run);
        if (next_) wait = std::min(wait, std::max(Millis{1}, *next_ - now));
        wake_.wait_for(mu_, wait);
        continue;  // look at the clock again, outside the lock
      }
      if (deadline_passed) next_.reset();
    }
    last_run = real;
    const std::optional<Time> next = expire_();
    sync::MutexLock lock(mu_);
    if (next && (!next_ || *next < *next_)) next_ = next;
  }
}

}  // namespace broker
