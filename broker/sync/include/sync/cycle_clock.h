// Steady time at the cost of a time-stamp counter read: the broker stamps every message
// with its clock, and the kernel's clock (the vDSO) costs far more than a counter read.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace broker::sync {

/// std::chrono::steady_clock in nanoseconds, read from the kernel less often where the
/// CPU's time-stamp counter allows, in one of two ways (now_ns picks one once):
/// - interpolated(): where the kernel keeps time with that counter itself (clocksource
///   "tsc": the kernel checked it is invariant and synchronized across CPUs), the kernel
///   is read at most about once per kAnchorNs on each thread and the time interpolated in
///   between at the rate the last two kernel reads measured (as absl::Now does); off the
///   kernel's clock by well under a microsecond;
/// - reused(): where the kernel keeps time otherwise (a VM's kvm-clock) but the counter is
///   invariant (it ticks at one rate, also in sleep states), a thread's last kernel read
///   is returned again until kReuseTicks ticks have passed on its counter: never ahead of
///   the kernel's clock, behind it by at most kReuseTicks ticks (twice that right after the
///   thread moved to a CPU whose counter is behind: a counter that went back, or jumped on,
///   reads the kernel anew);
/// elsewhere, and off x86-64, every call reads the kernel. Every way never goes back on one
/// thread, and reused() not across threads either: a call returns at least what any call
/// that happened before it returned. Thread-safe (each thread keeps its own reads); never
/// throws.
class CycleClock {
 public:
  static constexpr std::int64_t kAnchorNs = 1'000'000;
  /// About 31 us at 2.1 GHz (13-66 us on 1-5 GHz counters): a thirtieth of the millisecond
  /// the broker counts time in, for a kernel read per 31 us instead of one per call.
  static constexpr std::uint64_t kReuseTicks = 1 << 16;

  [[nodiscard]] static std::int64_t now_ns() {
#if defined(__x86_64__)
    static const Way way = choose();
    if (way == Way::kInterpolate) return interpolated();
    if (way == Way::kReuse) return reused();
#endif
    return kernel_ns();
  }

#if defined(__x86_64__)
  /// The interpolating way (see the class); meaningful only where the counter is invariant.
  [[nodiscard]] static std::int64_t interpolated() {
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
  }

  /// The reusing way (see the class); meaningful only where the counter is invariant.
  [[nodiscard]] static std::int64_t reused() {
    thread_local Recent r;
    const std::uint64_t tsc = __rdtsc();
    // Unsigned: a counter behind the one of the last read (another CPU's) reads anew.
    const bool fresh = tsc - r.tsc >= kReuseTicks;
    if (fresh) {
      r.tsc = tsc;
      r.ns = std::max(kernel_ns(), r.ns);
    }
    return merged(latest_, r.ns, fresh);
  }
#endif

  /// What reused() returns given this thread's read `ns`: `ns`, or a fresher read another
  /// thread published in `latest` if one happened before this call. A `fresh` read (from
  /// the kernel) is published first, so a call that happens after this one finds it.
  /// Relaxed throughout suffices: a load that happens after a store reads it or a later
  /// value (coherence), and the value only grows. A template so that the fiber checker runs
  /// this very code on a sync::Atomic under weak memory (CycleClockWeakMemory.*).
  /// Thread-safe; never throws.
  template <class AtomicNs>
  [[nodiscard]] static std::int64_t merged(AtomicNs& latest, std::int64_t ns, bool fresh) {
    if (fresh) {
      std::int64_t seen = latest.load(std::memory_order_relaxed);
      while (seen < ns && !latest.compare_exchange_strong(seen, ns, std::memory_order_relaxed)) {
      }
    }
    // Another thread's fresher read, if one happened before this call.
    return std::max(ns, latest.load(std::memory_order_relaxed));
  }

#if defined(__x86_64__)
  /// Whether the CPU says its counter ticks at one rate whatever its frequency and sleep
  /// state (CPUID 0x80000007, EDX bit 8), which Linux shows as constant_tsc and nonstop_tsc:
  /// where it does not, neither way above is meaningful. Reads /proc/cpuinfo.
  [[nodiscard]] static bool invariant_counter() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string word;
    bool constant = false;
    bool nonstop = false;
    while (cpuinfo >> word && !(constant && nonstop)) {
      constant = constant || word == "constant_tsc";
      nonstop = nonstop || word == "nonstop_tsc";
    }
    return constant && nonstop;
  }
#endif

 private:
  static std::int64_t kernel_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

#if defined(__x86_64__)
  enum class Way { kKernel, kInterpolate, kReuse };

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

  /// One thread's last kernel read (reused).
  struct Recent {
    std::uint64_t tsc = 0;
    std::int64_t ns = 0;
  };

  // The latest kernel read any thread made in reused(). Written once per kReuseTicks per
  // thread that reads the clock, read at every call: a line that stays shared.
  static inline std::atomic<std::int64_t> latest_{0};

  /// The kernel's clocksource (the time-stamp counter: interpolate), else the CPU's flags
  /// (an invariant counter: reuse), looked up once.
  static Way choose() {
    std::ifstream source_file("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string source;
    source_file >> source;
    if (source == "tsc") return Way::kInterpolate;
    return invariant_counter() ? Way::kReuse : Way::kKernel;
  }
#endif
};

}  // namespace broker::sync
