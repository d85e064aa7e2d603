// The machine's floor for handing a message to another thread: a preallocated ring of
// fixed slots, one release store per message, and one consumer thread that spins (pause,
// then yield) and never sleeps. Nothing delivers to another thread sooner; its latency
// tail is what the machine itself (scheduler, kernel threads, hypervisor) adds.
#pragma once

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "../common.h"

namespace bench {

/// A single-producer single-consumer handoff of payloads of at most kSlotBytes to one
/// subscriber. Single publishing thread only; a full ring makes publish wait (yielding).
/// Failed handler calls are retried at once. Throws std::invalid_argument for other than
/// one subscriber, std::length_error for a payload over kSlotBytes.
class FloorFanOut {
 public:
  static constexpr const char* kName = "floor";
  static constexpr std::size_t kSlots = 1 << 16;
  static constexpr std::size_t kSlotBytes = 64;

  /// Starts the consumer thread of the one subscriber.
  FloorFanOut(std::size_t subscribers, const HandlerFactory& make)
      : slots_(std::make_unique<Slot[]>(kSlots)) {
    if (subscribers != 1) throw std::invalid_argument("FloorFanOut: exactly one subscriber");
    handler_ = make(0);
    thread_ = std::thread([this] { run(); });
  }

  /// Stops the consumer; drops what is still queued.
  ~FloorFanOut() {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
  }
  FloorFanOut(const FloorFanOut&) = delete;
  FloorFanOut& operator=(const FloorFanOut&) = delete;

  /// Copies payload into the next slot and publishes it. REQUIRES: one publishing thread.
  void publish(std::string_view payload) {
    if (payload.size() > kSlotBytes) throw std::length_error("FloorFanOut: payload too big");
    const std::uint64_t n = published_.load(std::memory_order_relaxed);
    // Acquire: the consumer is done with the slot it released before we overwrite it.
    while (n - consumed_.load(std::memory_order_acquire) >= kSlots) std::this_thread::yield();
    Slot& s = slots_[n % kSlots];
    std::memcpy(s.bytes.data(), payload.data(), payload.size());
    s.size = payload.size();
    // Release: the consumer that sees n + 1 sees the slot's bytes.
    published_.store(n + 1, std::memory_order_release);
  }

 private:
  struct Slot {
    std::array<char, kSlotBytes> bytes;
    std::size_t size = 0;
  };

  void run() {
    std::uint64_t next = 0;
    int idle = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      const std::uint64_t end = published_.load(std::memory_order_acquire);
      if (next == end) {
        if (++idle < 64) {
          __builtin_ia32_pause();
        } else {
          std::this_thread::yield();
        }
        continue;
      }
      idle = 0;
      for (; next < end; ++next) {
        const Slot& s = slots_[next % kSlots];
        while (!handler_(std::string_view(s.bytes.data(), s.size))) {
        }
        consumed_.store(next + 1, std::memory_order_release);
      }
    }
  }

  std::unique_ptr<Slot[]> slots_;
  SubHandler handler_;
  alignas(64) std::atomic<std::uint64_t> published_{0};
  alignas(64) std::atomic<std::uint64_t> consumed_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace bench
