// The weak-memory exploration on the classic litmus shapes: each program's outcome that C++
// forbids is never reached, and each outcome that a weakened order allows is found by the
// bounded exhaustive search and replays from its printed schedule, while the sequentially
// consistent exploration (the one before weak memory) never reaches it.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "fiber/exhaustive.h"
#include "fiber/run.h"
#include "sync/cycle_clock.h"
#include "sync/sync.h"
#include "wake_signal.h"

namespace fiber {
namespace {

using broker::sync::Atomic;
using std::memory_order;
using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;

// A litmus program: fresh shared state per run, the fibers, and whether the outcome is allowed.
struct Litmus {
  std::function<std::vector<std::function<void()>>()> bodies;
  std::function<bool()> allowed;
};

// Runs every schedule of `make()` within two preemptions; returns the first run whose
// outcome is not allowed (or that failed), if any. Every run must complete.
std::optional<RunResult> first_forbidden(const std::function<Litmus()>& make, bool weak,
                                         ExploreStats* stats_out = nullptr) {
  std::function<bool()> allowed;
  auto run = [&](const Schedule& s) {
    Litmus l = make();
    allowed = l.allowed;
    return run_fibers(l.bodies(), s);
  };
  auto ok = [&](const RunResult& r) { return r.ok() && allowed(); };
  ExploreStats stats = explore_exhaustive(run, ok, 2, 20000, weak);
  if (stats_out != nullptr) *stats_out = stats;
  EXPECT_TRUE(stats.complete || stats.first_failure) << "bounded search did not finish";
  return stats.first_failure;
}

// The printed schedule of a failing run fails again.
void expect_replays(const std::function<Litmus()>& make, const RunResult& failure) {
  const std::optional<Schedule> s = parse_schedule(to_string(failure.schedule));
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->weak);
  Litmus l = make();
  const RunResult again = run_fibers(l.bodies(), *s);
  EXPECT_FALSE(again.ok() && l.allowed()) << "replay of " << to_string(*s) << " passed";
  EXPECT_EQ(again.trace_hash, failure.trace_hash);
}

// Message passing: data, then a flag; a reader that sees the flag must see the data.
Litmus message_passing(memory_order flag_store, memory_order flag_load) {
  auto data = std::make_shared<Atomic<int>>(0);
  auto flag = std::make_shared<Atomic<int>>(0);
  auto seen_flag_without_data = std::make_shared<bool>(false);
  return {[=] {
            return std::vector<std::function<void()>>{
                [=] {
                  data->store(42, memory_order_relaxed);
                  flag->store(1, flag_store);
                },
                [=] {
                  if (flag->load(flag_load) == 1 && data->load(memory_order_relaxed) != 42)
                    *seen_flag_without_data = true;
                }};
          },
          [=] { return !*seen_flag_without_data; }};
}

TEST(WeakMemory, ReleaseAcquirePublishesTheData) {
  ExploreStats stats;
  EXPECT_FALSE(first_forbidden(
      [] { return message_passing(memory_order_release, memory_order_acquire); }, true, &stats));
  EXPECT_TRUE(stats.complete);
}

TEST(WeakMemory, ARelaxedPublicationStoreLetsTheReaderSeeTheFlagWithoutTheData) {
  auto make = [] { return message_passing(memory_order_relaxed, memory_order_acquire); };
  EXPECT_FALSE(first_forbidden(make, false)) << "sequential consistency cannot show it";
  const std::optional<RunResult> found = first_forbidden(make, true);
  ASSERT_TRUE(found);
  EXPECT_GT(found->stale_reads, 0u);
  expect_replays(make, *found);
}

TEST(WeakMemory, ARelaxedLoadOfTheFlagLetsTheReaderSeeItWithoutTheData) {
  auto make = [] { return message_passing(memory_order_release, memory_order_relaxed); };
  EXPECT_FALSE(first_forbidden(make, false));
  const std::optional<RunResult> found = first_forbidden(make, true);
  ASSERT_TRUE(found);
  expect_replays(make, *found);
}

// Plain data published by a flag: a read of it that is not happens-after its write is a
// data race, reported by the run, even when the value read happens to be the new one.
Litmus plain_publication(memory_order flag_store, memory_order flag_load) {
  auto data = std::make_shared<int>(0);
  auto flag = std::make_shared<Atomic<int>>(0);
  return {[=] {
            return std::vector<std::function<void()>>{
                [=] {
                  *data = 42;
                  broker::sync::note_written(data.get(), sizeof(int), "the data");
                  flag->store(1, flag_store);
                },
                [=] {
                  if (flag->load(flag_load) == 1) {
                    broker::sync::note_read(data.get(), sizeof(int), "the data");
                  }
                }};
          },
          [] { return true; }};
}

TEST(WeakMemory, PlainDataReadAfterAnAcquireIsNoRace) {
  EXPECT_FALSE(first_forbidden(
      [] { return plain_publication(memory_order_release, memory_order_acquire); }, true));
}

TEST(WeakMemory, PlainDataReadAfterARelaxedLoadIsADataRace) {
  auto make = [] { return plain_publication(memory_order_release, memory_order_relaxed); };
  EXPECT_FALSE(first_forbidden(make, false));
  const std::optional<RunResult> found = first_forbidden(make, true);
  ASSERT_TRUE(found);
  EXPECT_NE(found->data_race.find("data-race: fiber 1 reads the data"), std::string::npos)
      << found->describe();
  EXPECT_NE(found->describe().find("data-race"), std::string::npos);
  expect_replays(make, *found);
}

// Store buffering (Dekker): each fiber stores its flag, then loads the other's. Under
// seq_cst one of them sees the other's store; under release/acquire both may read 0 (what
// x86's store buffer does): a handshake built on it loses a wake-up.
Litmus store_buffering(memory_order store, memory_order load) {
  auto x = std::make_shared<Atomic<int>>(0);
  auto y = std::make_shared<Atomic<int>>(0);
  auto r1 = std::make_shared<int>(-1);
  auto r2 = std::make_shared<int>(-1);
  return {[=] {
            return std::vector<std::function<void()>>{[=] {
                                                        x->store(1, store);
                                                        *r1 = y->load(load);
                                                      },
                                                      [=] {
                                                        y->store(1, store);
                                                        *r2 = x->load(load);
                                                      }};
          },
          [=] { return !(*r1 == 0 && *r2 == 0); }};
}

TEST(WeakMemory, SeqCstStoreBufferingNeverLosesBothStores) {
  ExploreStats stats;
  EXPECT_FALSE(first_forbidden(
      [] { return store_buffering(memory_order_seq_cst, memory_order_seq_cst); }, true, &stats));
  EXPECT_TRUE(stats.complete);
}

TEST(WeakMemory, ReleaseAcquireStoreBufferingLetsBothReadZero) {
  auto make = [] { return store_buffering(memory_order_release, memory_order_acquire); };
  EXPECT_FALSE(first_forbidden(make, false));
  const std::optional<RunResult> found = first_forbidden(make, true);
  ASSERT_TRUE(found);
  expect_replays(make, *found);
}

// Fences: a relaxed flag between a release fence and an acquire fence publishes the data.
Litmus fenced(bool release_fence, bool acquire_fence) {
  auto data = std::make_shared<Atomic<int>>(0);
  auto flag = std::make_shared<Atomic<int>>(0);
  auto bad = std::make_shared<bool>(false);
  return {[=] {
            return std::vector<std::function<void()>>{
                [=] {
                  data->store(42, memory_order_relaxed);
                  if (release_fence) broker::sync::fence(memory_order_release);
                  flag->store(1, memory_order_relaxed);
                },
                [=] {
                  if (flag->load(memory_order_relaxed) == 1) {
                    if (acquire_fence) broker::sync::fence(memory_order_acquire);
                    if (data->load(memory_order_relaxed) != 42) *bad = true;
                  }
                }};
          },
          [=] { return !*bad; }};
}

TEST(WeakMemory, FencesAroundARelaxedFlagPublishTheData) {
  EXPECT_FALSE(first_forbidden([] { return fenced(true, true); }, true));
}

TEST(WeakMemory, EitherFenceRemovedLosesTheData) {
  for (const bool release_fence : {false, true}) {
    auto make = [=] { return fenced(release_fence, !release_fence); };
    EXPECT_FALSE(first_forbidden(make, false));
    const std::optional<RunResult> found = first_forbidden(make, true);
    ASSERT_TRUE(found) << (release_fence ? "acquire" : "release") << " fence removed";
    expect_replays(make, *found);
  }
}

// A release sequence: a relaxed read-modify-write after a release store passes it on, so
// an acquire that reads the RMW's value sees what came before the release.
TEST(WeakMemory, AReadModifyWriteContinuesTheReleaseSequence) {
  auto make = [] {
    auto data = std::make_shared<Atomic<int>>(0);
    auto flag = std::make_shared<Atomic<int>>(0);
    auto bad = std::make_shared<bool>(false);
    return Litmus{
        [=] {
          return std::vector<std::function<void()>>{
              [=] {
                data->store(42, memory_order_relaxed);
                flag->store(1, memory_order_release);
              },
              [=] { flag->fetch_add(1, memory_order_relaxed); },
              [=] {
                if (flag->load(memory_order_acquire) == 2 && data->load(memory_order_relaxed) != 42)
                  *bad = true;
              }};
        },
        [=] { return !*bad; }};
  };
  EXPECT_FALSE(first_forbidden(make, true));
}

// Coherence: two loads of one atomic by one fiber never go back in its modification order,
// even relaxed (no value out of order, none out of thin air).
TEST(WeakMemory, RelaxedLoadsNeverGoBack) {
  auto make = [] {
    auto x = std::make_shared<Atomic<int>>(0);
    auto bad = std::make_shared<bool>(false);
    return Litmus{[=] {
                    return std::vector<std::function<void()>>{[=] {
                                                                for (int v = 1; v <= 3; ++v)
                                                                  x->store(v, memory_order_relaxed);
                                                              },
                                                              [=] {
                                                                int last = 0;
                                                                for (int i = 0; i < 3; ++i) {
                                                                  const int v =
                                                                      x->load(memory_order_relaxed);
                                                                  if (v < last || v < 0 || v > 3)
                                                                    *bad = true;
                                                                  last = v;
                                                                }
                                                              }};
                  },
                  [=] { return !*bad; }};
  };
  ExploreStats stats;
  EXPECT_FALSE(first_forbidden(make, true, &stats));
  EXPECT_TRUE(stats.complete);
  EXPECT_GT(stats.distinct_traces, 20u) << "the loads were given no older stores to read";
}

// The spin lock (sync/spin_lock.h, the log's lock) orders the plain data of its sections:
// two fibers that each add under it leave no data race and no lost update.
TEST(WeakMemory, TheSpinLockOrdersItsSections) {
  auto make = [] {
    auto mu = std::make_shared<broker::sync::SpinLock>();
    auto counter = std::make_shared<int>(0);
    auto body = [=] {
      broker::sync::SpinLockHold hold(*mu);
      broker::sync::note_read(counter.get(), sizeof(int), "the counter");
      const int seen = *counter;
      *counter = seen + 1;
      broker::sync::note_written(counter.get(), sizeof(int), "the counter");
    };
    return Litmus{[=] {
                    return std::vector<std::function<void()>>{body, body};
                  },
                  [=] { return *counter == 2; }};
  };
  ExploreStats stats;
  EXPECT_FALSE(first_forbidden(make, true, &stats));
  EXPECT_TRUE(stats.complete);
}

// CycleClock's shared reads (the reusing way's `latest`, relaxed throughout), this very code
// on a sync::Atomic: a call that happens after another never returns less than it did, and
// no call returns less than its own read, whichever stores the relaxed loads read.
TEST(CycleClockWeakMemory, ACallThatHappensAfterAnotherNeverReturnsLess) {
  using broker::sync::CycleClock;
  auto make = [] {
    auto latest = std::make_shared<Atomic<std::int64_t>>(0);
    auto flag = std::make_shared<Atomic<int>>(0);
    auto first = std::make_shared<std::int64_t>(0);
    auto bad = std::make_shared<bool>(false);
    return Litmus{[=] {
                    return std::vector<std::function<void()>>{
                        [=] {
                          *first = CycleClock::merged(*latest, 10, true);
                          flag->store(1, memory_order_release);
                        },
                        [=] {
                          if (flag->load(memory_order_acquire) == 1 &&
                              CycleClock::merged(*latest, 5, false) < *first)
                            *bad = true;
                        },
                        [=] {
                          if (CycleClock::merged(*latest, 7, true) < 7) *bad = true;
                        }};
                  },
                  [=] { return !*bad; }};
  };
  ExploreStats stats;
  EXPECT_FALSE(first_forbidden(make, true, &stats));
  EXPECT_TRUE(stats.complete);
}

// The wake-up event count (broker/src/wake_signal.h), this very class: a publisher stores
// its work (a release, as the log's end) and raises; a consumer looks, reads the work (an
// acquire), and sleeps only if try_sleep lets it, to be woken through a lock by a raise
// that found it idle. No wake-up is lost: the run never deadlocks with the consumer asleep
// and the work undone.
TEST(WakeSignalWeakMemory, NoRaiseIsLostWhateverTheLoadsRead) {
  auto make = [] {
    auto work = std::make_shared<Atomic<int>>(0);
    auto signal = std::make_shared<broker::WakeSignal>();
    auto mu = std::make_shared<broker::sync::Mutex>();
    auto cv = std::make_shared<broker::sync::CondVar>();
    auto woken = std::make_shared<bool>(false);
    auto done = std::make_shared<int>(0);
    return Litmus{[=] {
                    return std::vector<std::function<void()>>{
                        [=] {
                          for (int i = 1; i <= 2; ++i) {
                            work->store(i, memory_order_release);
                            if (!signal->raise()) {
                              broker::sync::MutexLock lock(*mu);
                              *woken = true;
                              cv->notify_one();
                            }
                          }
                        },
                        [=] {
                          for (;;) {
                            signal->look();
                            *done = work->load(memory_order_acquire);
                            if (*done == 2) return;
                            if (signal->try_sleep()) {
                              broker::sync::MutexLock lock(*mu);
                              while (!*woken) cv->wait(*mu);
                              *woken = false;
                            }
                          }
                        }};
                  },
                  [=] { return *done == 2; }};
  };
  ExploreStats stats;
  EXPECT_FALSE(first_forbidden(make, true, &stats));
  EXPECT_TRUE(stats.complete);
}

// A random walk under weak memory reads older stores too, and a spin that waits for a store
// ends (half of the drawn loads read the newest).
TEST(WeakMemory, RandomWalksReadOlderStoresAndSpinsEnd) {
  std::size_t stale = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    auto flag = std::make_shared<Atomic<int>>(0);
    Schedule s = Schedule::random(seed);
    s.weak = true;
    const RunResult r = run_fibers({[=] {
                                      for (int v = 1; v <= 4; ++v)
                                        flag->store(v, memory_order_relaxed);
                                    },
                                    [=] {
                                      while (flag->load(memory_order_relaxed) != 4) yield("spin");
                                    }},
                                   s, RunOptions{.max_steps = 5000});
    ASSERT_TRUE(r.ok()) << r.describe();
    stale += r.stale_reads;
  }
  EXPECT_GT(stale, 0u);
}

}  // namespace
}  // namespace fiber
