// sync::SpinLock on real threads: the lock a log's appends take. Its unlock is a plain
// store, so the checks are the two things a lock owes: one holder at a time, and a holder
// that sees everything the one before it wrote. Under ThreadSanitizer (label `stress`) a
// release that does not publish the section's writes shows as a data race on `plain`.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "sync/sync.h"

namespace broker::sync {
namespace {

// Enough sections for the holders' windows to overlap many times if the lock lets two in.
constexpr int kSectionsPerThread = 400'000;

TEST(SpinLockRules, OneHolderAtATimeAndEachSeesThePreviousWrites) {
  SpinLock lock;
  std::atomic<int> inside{0};   // holders in the section now
  std::atomic<int> crowded{0};  // sections that found another holder inside
  std::uint64_t plain = 0;      // guarded by lock only: lost updates if two hold it
  const int threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  // All start together: a thread started late would find the lock to itself.
  std::atomic<int> ready{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      ready.fetch_add(1, std::memory_order_relaxed);
      while (ready.load(std::memory_order_relaxed) < threads) std::this_thread::yield();
      for (int i = 0; i < kSectionsPerThread; ++i) {
        // A little work between sections, of varying length, as publishers do: the holder
        // does not simply take the lock back, so the threads meet it free at the same time.
        for (int k = 0; k < i % 4; ++k) spin_pause();
        SpinLockHold hold(lock);
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) {
          crowded.fetch_add(1, std::memory_order_relaxed);
        }
        // A read and a write apart, so a second holder in between loses an update.
        const std::uint64_t seen = plain;
        plain = seen + 1;
        inside.fetch_sub(1, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(crowded.load(), 0) << "sections entered while another thread held the lock";
  EXPECT_EQ(plain, static_cast<std::uint64_t>(threads) * kSectionsPerThread)
      << "updates lost: a holder did not see the previous holder's write";
}

TEST(SpinLockRules, AHolderThatYieldsIsWaitedFor) {
  // A waiter that gave up spinning (it yields) still gets the lock once it is free, and
  // only then.
  SpinLock lock;
  std::atomic<bool> released{false};
  std::atomic<bool> acquired_early{false};
  lock.lock();
  std::thread waiter([&] {
    SpinLockHold hold(lock);
    if (!released.load(std::memory_order_relaxed)) acquired_early = true;
  });
  for (int i = 0; i < 1000; ++i) std::this_thread::yield();
  released.store(true, std::memory_order_relaxed);
  lock.unlock();
  waiter.join();
  EXPECT_FALSE(acquired_early.load()) << "the waiter took a held lock";
}

}  // namespace
}  // namespace broker::sync
