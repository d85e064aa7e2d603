// sync::CycleClock, the broker's SteadyClock on real threads: the kernel's steady time at
// the cost of a counter read. Checked against the kernel's clock read around each call,
// over enough time for dozens of anchors on each of several threads.
#include "sync/cycle_clock.h"

#include <gtest/gtest.h>

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

// A kernel read preempted for up to CycleClock's limit still anchors; well below the
// millisecond the broker's times are counted in.
constexpr std::int64_t kToleranceNs = 20'000;

/// Calls the clock for `run_ns` between two kernel reads each; returns what went wrong.
std::string Follow(std::int64_t run_ns) {
  std::ostringstream out;
  std::int64_t previous = 0;
  int outside = 0;
  const std::int64_t until = KernelNs() + run_ns;
  for (std::int64_t k1 = KernelNs(); k1 < until; k1 = KernelNs()) {
    const std::int64_t c = CycleClock::now_ns();
    const std::int64_t k2 = KernelNs();
    if (c < previous) out << "went back from " << previous << " to " << c << "\n";
    previous = c;
    if ((c < k1 - kToleranceNs || c > k2 + kToleranceNs) && ++outside <= 3) {
      out << "read " << c << " outside the kernel's [" << k1 << ", " << k2 << "] by "
          << (c < k1 ? k1 - c : c - k2) << " ns\n";
    }
  }
  return out.str();
}

TEST(CycleClock, FollowsTheKernelsSteadyClockAndNeverGoesBack) {
  EXPECT_EQ(Follow(40 * CycleClock::kAnchorNs), "");
}

TEST(CycleClock, EachThreadFollowsItAfterSleepsLongerThanItsAnchor) {
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < errors.size(); ++t) {
    threads.emplace_back([&errors, t] {
      for (int round = 0; round < 5; ++round) {
        errors[t] += Follow(3 * CycleClock::kAnchorNs);
        // Longer than the interval a rate is measured over: the next read anchors anew.
        std::this_thread::sleep_for(std::chrono::nanoseconds(20 * CycleClock::kAnchorNs));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t t = 0; t < errors.size(); ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

}  // namespace
}  // namespace broker::sync
