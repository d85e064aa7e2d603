// Steady time at the cost of a time-stamp counter read (issue 19): the broker stamps every
// message with its clock, and reading the kernel's clock (the vDSO) was a fifth of a
// publish.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace broker::sync {

/// std::chrono::steady_clock in nanoseconds, read from the kernel at most about once per
/// kAnchorNs on each thread and interpolated in between from the CPU's time-stamp counter
/// at the rate the last two kernel reads measured (as absl::Now does). Only where the
/// kernel keeps time with that counter itself (clocksource "tsc": the kernel checked it is
/// invariant and synchronized across CPUs); elsewhere, and off x86-64, every call reads the
/// kernel. Never goes back on one thread; off the kernel's clock by well under a
/// microsecond. Thread-safe (each thread keeps its own anchor); never throws.
class CycleClock {
 public:
  static constexpr std::int64_t kAnchorNs = 1'000'000;

  [[nodiscard]] static std::int64_t now_ns() {
#if defined(__x86_64__)
    if (!usable()) return kernel_ns();
    thread_local Anchor a;
    const std::uint64_t ticks = __rdtsc() - a.tsc;
    std::int64_t ns;
    if (ticks < a.max_ticks) {
      ns = a.ns + static_cast<std::int64_t>(static_cast<double>(ticks) * a.ns_per_tick);
    } else {
      ns = a.anchor();
    }
    ns = std::max(ns, a.last);
    a.last = ns;
    return ns;
#else
    return kernel_ns();
#endif
  }

 private:
  static std::int64_t kernel_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

#if defined(__x86_64__)
  // A kernel read that took longer than this many ticks (a preemption between the counter
  // reads around it) anchors nothing: its time is not the counter's.
  static constexpr std::uint64_t kMaxReadTicks = 20'000;

  /// One thread's last kernel read and the rate it interpolates with.
  struct Anchor {
    std::uint64_t tsc = 0;
    std::int64_t ns = 0;
    double ns_per_tick = 0;
    std::uint64_t max_ticks = 0;  // 0: no rate yet, or the anchor is stale
    std::int64_t last = 0;        // the latest time returned on this thread

    /// Reads the kernel; anchors there once the last anchor is kAnchorNs old (so the rate
    /// comes from a long enough interval), measuring the rate if that interval was not too
    /// long to trust (a suspended machine, a thread that slept). Returns the kernel's time.
    std::int64_t anchor() {
      const std::uint64_t before = __rdtsc();
      const std::int64_t kernel = kernel_ns();
      const std::uint64_t after = __rdtsc();
      if (after - before > kMaxReadTicks) return kernel;
      const std::uint64_t at = before + (after - before) / 2;
      const std::int64_t elapsed = kernel - ns;
      if (ns != 0 && elapsed < kAnchorNs) return kernel;  // too soon to measure a rate
      max_ticks = 0;
      if (ns != 0 && elapsed <= 16 * kAnchorNs && at > tsc) {
        ns_per_tick = static_cast<double>(elapsed) / static_cast<double>(at - tsc);
        max_ticks = static_cast<std::uint64_t>(static_cast<double>(kAnchorNs) / ns_per_tick);
      }
      tsc = at;
      ns = kernel;
      return kernel;
    }
  };

  /// Whether the kernel's clocksource is the time-stamp counter (looked up once).
  static bool usable() {
    static const bool tsc = [] {
      std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
      std::string source;
      f >> source;
      return source == "tsc";
    }();
    return tsc;
  }
#endif
};

}  // namespace broker::sync
