// sync::CycleClock, the broker's SteadyClock on real threads: the kernel's steady time at
// the cost of a counter read. Each way of reading it is checked against the kernel's clock
// read around each call, over enough time for dozens of kernel reads on each of several
// threads, whichever way this host's now_ns uses.
#include "sync/cycle_clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace broker::sync {
namespace {

std::int64_t KernelNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// How far a way may be from the kernel's clock read just before (behind) and just after
/// (ahead) the call.
struct Bounds {
  std::int64_t behind_ns;
  std::int64_t ahead_ns;
};

/// Calls `read` for `run_ns` between two kernel reads each; returns what went wrong.
template <class Read>
std::string Follow(Read read, Bounds bounds, std::int64_t run_ns) {
  std::ostringstream out;
  std::int64_t previous = 0;
  int outside = 0;
  const std::int64_t until = KernelNs() + run_ns;
  for (std::int64_t k1 = KernelNs(); k1 < until; k1 = KernelNs()) {
    const std::int64_t c = read();
    const std::int64_t k2 = KernelNs();
    if (c < previous) out << "went back from " << previous << " to " << c << "\n";
    previous = c;
    if ((c < k1 - bounds.behind_ns || c > k2 + bounds.ahead_ns) && ++outside <= 3) {
      out << "read " << c << " outside the kernel's [" << k1 << ", " << k2 << "] by "
          << (c < k1 ? k1 - c : c - k2) << " ns\n";
    }
  }
  return out.str();
}

/// Checks `read` on several threads at once, each sleeping longer than kAnchorNs between
/// rounds (so each round's first read finds a stale anchor or reuse).
template <class Read>
void FollowOnThreads(Read read, Bounds bounds) {
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < errors.size(); ++t) {
    threads.emplace_back([&errors, t, read, bounds] {
      for (int round = 0; round < 5; ++round) {
        errors[t] += Follow(read, bounds, 3 * CycleClock::kAnchorNs);
        std::this_thread::sleep_for(std::chrono::nanoseconds(20 * CycleClock::kAnchorNs));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t t = 0; t < errors.size(); ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

// A kernel read preempted for up to CycleClock's limit still anchors; well below the
// millisecond the broker's times are counted in.
constexpr Bounds kInterpolated{20'000, 20'000};

#if defined(__x86_64__)
/// Nanoseconds per counter tick, measured against the kernel over 20 ms.
double NsPerTick() {
  const std::uint64_t t0 = __rdtsc();
  const std::int64_t k0 = KernelNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t t1 = __rdtsc();
  const std::int64_t k1 = KernelNs();
  return static_cast<double>(k1 - k0) / static_cast<double>(t1 - t0);
}

/// A reused read is a kernel read from at most twice kReuseTicks before the call (a
/// thread that moved to a CPU whose counter is behind), never one from after it.
Bounds Reused() {
  return {static_cast<std::int64_t>(2.0 * CycleClock::kReuseTicks * NsPerTick()) + 1'000, 0};
}
#endif

TEST(CycleClock, FollowsTheKernelsSteadyClockAndNeverGoesBack) {
  // now_ns's way on this host: any of them stays within the loosest bounds.
  Bounds loosest = kInterpolated;
#if defined(__x86_64__)
  loosest.behind_ns = std::max(loosest.behind_ns, Reused().behind_ns);
#endif
  EXPECT_EQ(Follow([] { return CycleClock::now_ns(); }, loosest, 40 * CycleClock::kAnchorNs), "");
}

#if defined(__x86_64__)
TEST(CycleClock, InterpolatedTimeFollowsTheKernelOnEachThread) {
  if (!CycleClock::invariant_counter()) GTEST_SKIP() << "no invariant time-stamp counter";
  EXPECT_EQ(
      Follow([] { return CycleClock::interpolated(); }, kInterpolated, 40 * CycleClock::kAnchorNs),
      "");
  FollowOnThreads([] { return CycleClock::interpolated(); }, kInterpolated);
}

TEST(CycleClock, ReusedTimeIsARecentKernelReadNeverAheadOfIt) {
  if (!CycleClock::invariant_counter()) GTEST_SKIP() << "no invariant time-stamp counter";
  const Bounds bounds = Reused();
  EXPECT_EQ(Follow([] { return CycleClock::reused(); }, bounds, 40 * CycleClock::kAnchorNs), "");
  FollowOnThreads([] { return CycleClock::reused(); }, bounds);
}

// Two threads take turns: each reads the clock after it saw the other's read, so its read
// happens after that one and must not be earlier, though its own last kernel read may be.
TEST(CycleClock, ReusedTimeNeverGoesBackAcrossThreads) {
  if (!CycleClock::invariant_counter()) GTEST_SKIP() << "no invariant time-stamp counter";
  constexpr int kTurns = 50'000;
  std::atomic<int> turn{0};
  std::atomic<std::int64_t> handed{0};
  std::atomic<int> went_back{0};
  std::int64_t first_back[2] = {0, 0};
  auto player = [&](int me) {
    for (int k = me; k < kTurns; k += 2) {
      // Yields: under a loaded test run both threads may share one CPU.
      while (turn.load(std::memory_order_acquire) != k) std::this_thread::yield();
      const std::int64_t before = handed.load(std::memory_order_relaxed);
      const std::int64_t now = CycleClock::reused();
      if (now < before && went_back.fetch_add(1) == 0) {
        first_back[0] = before;
        first_back[1] = now;
      }
      handed.store(now, std::memory_order_relaxed);
      turn.store(k + 1, std::memory_order_release);
    }
  };
  std::thread other(player, 1);
  player(0);
  other.join();
  EXPECT_EQ(went_back.load(), 0) << "first: " << first_back[1] << " after " << first_back[0]
                                 << " on the other thread";
}
#endif

}  // namespace
}  // namespace broker::sync
