// The seed's good design: a queue per subscriber (mutex + condition variable + std::deque)
// and one thread per subscriber. The publisher only appends.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../common.h"

namespace bench {

/// A thread and an owned queue of payload copies per subscriber. A failed call is retried
/// after `backoff` (at-least-once, in order). With bound > 0 a queue drops its oldest
/// message beyond bound (the seed's "drop the oldest" policy). Thread-safe publish.
class GoodFanOut {
 public:
  static constexpr const char* kName = "good";

  /// Starts one thread per subscriber.
  GoodFanOut(std::size_t subscribers, const HandlerFactory& make, std::size_t bound = 0,
             std::chrono::microseconds backoff = std::chrono::microseconds(0))
      : bound_(bound), backoff_(backoff) {
    for (std::size_t i = 0; i < subscribers; ++i) {
      subs_.push_back(std::make_unique<Sub>());
      subs_.back()->handler = make(i);
    }
    for (auto& s : subs_) s->thread = std::thread([this, sp = s.get()] { run(*sp); });
  }

  /// Stops every thread after its current handler call; drops what is still queued.
  ~GoodFanOut() {
    stopping_.store(true, std::memory_order_relaxed);
    for (auto& s : subs_) {
      std::lock_guard lock(s->mu);
      s->stop = true;
      s->wake.notify_one();
    }
    for (auto& s : subs_) s->thread.join();
  }
  GoodFanOut(const GoodFanOut&) = delete;
  GoodFanOut& operator=(const GoodFanOut&) = delete;

  /// Appends a copy of payload to every subscriber's queue; never runs a handler.
  void publish(std::string_view payload) {
    for (auto& s : subs_) {
      std::lock_guard lock(s->mu);
      s->queue.emplace_back(payload);
      if (bound_ > 0 && s->queue.size() > bound_) s->queue.pop_front();
      if (s->waiting) s->wake.notify_one();
    }
  }

 private:
  struct Sub {
    std::mutex mu;
    std::condition_variable wake;
    std::deque<std::string> queue;  // guarded by mu
    bool waiting = false;           // guarded by mu
    bool stop = false;              // guarded by mu
    SubHandler handler;
    std::thread thread;
  };

  // Takes the whole queue at once and runs its messages outside the lock.
  void run(Sub& s) {
    std::deque<std::string> batch;
    for (;;) {
      {
        std::unique_lock lock(s.mu);
        s.waiting = true;
        s.wake.wait(lock, [&] { return s.stop || !s.queue.empty(); });
        s.waiting = false;
        if (s.stop) return;
        batch.swap(s.queue);
      }
      for (const std::string& m : batch) {
        while (!s.handler(m)) {
          if (backoff_.count() > 0) std::this_thread::sleep_for(backoff_);
        }
        if (stopping_.load(std::memory_order_relaxed)) return;
      }
      batch.clear();
    }
  }

  const std::size_t bound_;
  const std::chrono::microseconds backoff_;
  std::vector<std::unique_ptr<Sub>> subs_;
  std::atomic<bool> stopping_{false};  // lets a thread drop its taken batch at shutdown
};

}  // namespace bench
