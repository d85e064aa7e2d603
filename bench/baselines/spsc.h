// A lock-free single-producer single-consumer ring per subscriber (boost::lockfree), one
// thread each; consumers spin briefly, then yield, then nap when idle.
#pragma once

#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../common.h"

namespace bench {

/// One bounded SPSC ring of shared payloads per subscriber. Single publisher thread only;
/// a full ring makes publish wait (yielding) for that subscriber. Failed calls are retried.
class SpscFanOut {
 public:
  static constexpr const char* kName = "spsc";
  static constexpr std::size_t kCapacity = 1 << 16;

  /// Starts one consumer thread per subscriber.
  SpscFanOut(std::size_t subscribers, const HandlerFactory& make) {
    for (std::size_t i = 0; i < subscribers; ++i) {
      subs_.push_back(std::make_unique<Sub>());
      subs_.back()->handler = make(i);
    }
    for (auto& s : subs_) s->thread = std::thread([this, sp = s.get()] { run(*sp); });
  }

  /// Stops every consumer; drops what is still queued.
  ~SpscFanOut() {
    stop_.store(true, std::memory_order_relaxed);
    for (auto& s : subs_) s->thread.join();
  }
  SpscFanOut(const SpscFanOut&) = delete;
  SpscFanOut& operator=(const SpscFanOut&) = delete;

  /// Shares one copy of payload with every ring. REQUIRES: one publishing thread.
  void publish(std::string_view payload) {
    auto m = std::make_shared<const std::string>(payload);
    for (auto& s : subs_) {
      while (!s->ring.push(m)) std::this_thread::yield();
    }
  }

 private:
  struct Sub {
    boost::lockfree::spsc_queue<std::shared_ptr<const std::string>> ring{kCapacity};
    SubHandler handler;
    std::thread thread;
  };

  void run(Sub& s) {
    int idle = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      const std::size_t n = s.ring.consume_all([&](const std::shared_ptr<const std::string>& m) {
        while (!s.handler(*m)) {
        }
      });
      if (n > 0) {
        idle = 0;
      } else if (++idle < 64) {
        __builtin_ia32_pause();
      } else if (idle < 64 + 256) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  std::vector<std::unique_ptr<Sub>> subs_;
  std::atomic<bool> stop_{false};
};

}  // namespace bench
