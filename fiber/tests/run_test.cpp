// The runner: determinism, deadlock and livelock reports, virtual time, exhaustive counts.
#include "fiber/run.h"

#include <gtest/gtest.h>

#include <set>

#include "fiber/exhaustive.h"
#include "sync/sync.h"

namespace fiber {
namespace {

using broker::sync::CondVar;
using broker::sync::Mutex;
using broker::sync::MutexLock;
using std::chrono::milliseconds;

// n fibers, each passing `points` labelled scheduling points.
std::vector<std::function<void()>> yielders(int n, int points) {
  std::vector<std::function<void()>> bodies;
  for (int i = 0; i < n; ++i) {
    bodies.push_back([points] {
      for (int p = 0; p < points; ++p) yield("step");
    });
  }
  return bodies;
}

// Three fibers contending on one mutex and a condition variable.
std::vector<std::function<void()>> contended(std::shared_ptr<int> counter) {
  auto mu = std::make_shared<Mutex>();
  auto cv = std::make_shared<CondVar>();
  std::vector<std::function<void()>> bodies;
  for (int i = 0; i < 3; ++i) {
    bodies.push_back([=] {
      for (int r = 0; r < 3; ++r) {
        MutexLock lock(*mu);
        ++*counter;
        cv->notify_all();
        if (*counter < 9) cv->wait_for(*mu, milliseconds(5));
      }
    });
  }
  return bodies;
}

TEST(FiberRun, ReplayingOneScheduleTenTimesGivesOneHash) {
  for (const Schedule& s :
       {Schedule::random(7), Schedule::pct(7, 3, 60), Schedule::walk({1, 0, 2})}) {
    std::set<std::uint64_t> hashes;
    for (int i = 0; i < 10; ++i) {
      auto counter = std::make_shared<int>(0);
      RunResult r = run_fibers(contended(counter), s);
      ASSERT_TRUE(r.ok()) << r.describe();
      EXPECT_EQ(*counter, 9);
      hashes.insert(r.trace_hash);
    }
    EXPECT_EQ(hashes.size(), 1u) << to_string(s);
  }
}

TEST(FiberRun, ChoicesReplayTheRunAsAWalk) {
  RunResult pct = run_fibers(contended(std::make_shared<int>(0)), Schedule::pct(99, 2, 60));
  RunResult walk = run_fibers(contended(std::make_shared<int>(0)), Schedule::walk(pct.choices));
  EXPECT_EQ(pct.trace_hash, walk.trace_hash);
}

TEST(FiberRun, DifferentSeedsExploreDifferentInterleavings) {
  std::set<std::uint64_t> hashes;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    hashes.insert(
        run_fibers(contended(std::make_shared<int>(0)), Schedule::random(seed)).trace_hash);
  }
  EXPECT_GT(hashes.size(), 10u);
}

TEST(FiberRun, LockOrderInversionIsReportedAsDeadlock) {
  // Fresh mutexes per run: an abandoned (deadlocked) run keeps its locks forever.
  auto program = [] {
    auto a = std::make_shared<Mutex>();
    auto b = std::make_shared<Mutex>();
    return std::vector<std::function<void()>>{[=] {
                                                MutexLock x(*a);
                                                MutexLock y(*b);
                                              },
                                              [=] {
                                                MutexLock x(*b);
                                                MutexLock y(*a);
                                              }};
  };
  ExploreStats stats =
      explore_exhaustive([&](const Schedule& s) { return run_fibers(program(), s); },
                         [](const RunResult& r) { return r.ok(); }, 2, 1000);
  ASSERT_TRUE(stats.first_failure);
  const RunResult& dead = *stats.first_failure;
  EXPECT_EQ(dead.outcome, Outcome::kDeadlock) << dead.describe();
  EXPECT_NE(dead.report.find("lock-wait"), std::string::npos) << dead.report;
  // The printed schedule replays to the same deadlock.
  RunResult again = run_fibers(program(), *parse_schedule(to_string(dead.schedule)));
  EXPECT_EQ(again.outcome, Outcome::kDeadlock);
  EXPECT_EQ(again.trace_hash, dead.trace_hash);
}

TEST(FiberRun, WaitWithoutNotifyIsReportedAsDeadlock) {
  auto mu = std::make_shared<Mutex>();
  auto cv = std::make_shared<CondVar>();
  RunResult r = run_fibers({[=] {
                             MutexLock lock(*mu);
                             cv->wait(*mu);
                           }},
                           Schedule::walk({}));
  EXPECT_EQ(r.outcome, Outcome::kDeadlock);
  EXPECT_NE(r.report.find("cv-wait"), std::string::npos) << r.report;
}

TEST(FiberRun, SpinningForeverHitsTheStepLimit) {
  auto flag = std::make_shared<bool>(false);
  RunResult r = run_fibers({[=] {
                              while (!*flag) yield("spin");
                            },
                            [=] {
                              while (!*flag) yield("spin");
                            }},
                           Schedule::random(3), RunOptions{.max_steps = 5000});
  EXPECT_EQ(r.outcome, Outcome::kStepLimit);
}

TEST(FiberRun, TimeoutsFireOnlyWhenNoFiberCanRun) {
  auto mu = std::make_shared<Mutex>();
  auto cv = std::make_shared<CondVar>();
  auto log = std::make_shared<std::vector<std::string>>();
  RunResult r = run_fibers({[=] {
                              const milliseconds t0 = broker::sync::steady_now();
                              MutexLock lock(*mu);
                              const bool notified = cv->wait_for(*mu, milliseconds(100));
                              log->push_back(notified ? "notified" : "timeout");
                              EXPECT_EQ(broker::sync::steady_now() - t0, milliseconds(100));
                            },
                            [=] {
                              for (int i = 0; i < 50; ++i) yield("busy");
                              log->push_back("busy done");
                            }},
                           Schedule::random(11));
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(*log, (std::vector<std::string>{"busy done", "timeout"}));
}

TEST(FiberRun, SleepAdvancesVirtualTimeOnly) {
  const auto wall = std::chrono::steady_clock::now();
  RunResult r = run_fibers({[] { sleep_for(milliseconds(60'000)); }}, Schedule::walk({}));
  ASSERT_TRUE(r.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - wall, std::chrono::seconds(5));
  EXPECT_EQ(r.virtual_end, milliseconds(3'600'000 + 60'000));
}

TEST(FiberRun, ThreadsStartAndJoinAsFibers) {
  auto sum = std::make_shared<int>(0);
  RunResult r = run_fibers({[=] {
                             std::vector<broker::sync::Thread> threads;
                             for (int i = 1; i <= 3; ++i) {
                               threads.emplace_back([=] { *sum += i; });
                             }
                             for (auto& t : threads) t.join();
                             EXPECT_EQ(*sum, 6);
                           }},
                           Schedule::random(5));
  ASSERT_TRUE(r.ok()) << r.describe();
}

TEST(FiberRun, ContextSlotIsPerFiber) {
  RunResult r = run_fibers({[] {
                              int mine = 0;
                              broker::sync::context_slot() = &mine;
                              yield("a");
                              EXPECT_EQ(broker::sync::context_slot(), &mine);
                            },
                            [] {
                              EXPECT_EQ(broker::sync::context_slot(), nullptr);
                              int mine = 0;
                              broker::sync::context_slot() = &mine;
                              yield("b");
                              EXPECT_EQ(broker::sync::context_slot(), &mine);
                            }},
                           Schedule::random(2));
  ASSERT_TRUE(r.ok()) << r.describe();
}

TEST(FiberRun, AnExceptionInABodyIsReported) {
  RunResult r = run_fibers({[] { throw std::runtime_error("boom"); }}, Schedule::walk({}));
  EXPECT_EQ(r.outcome, Outcome::kCompleted);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error_fiber, "fiber 0: boom");
}

// Interleavings of 2 fibers x 3 segments: C(6,3) = 20 in all; with at most P preemptions
// (switches away from a fiber that could go on) 2, 6, 14 for P = 0, 1, 2 (counted by
// hand: start A or B; then A^i B^3 A^(3-i); then A^i B^j A^(3-i) B^(3-j)).
TEST(FiberExhaustive, CountsMatchTheCombinatorics) {
  const std::vector<std::pair<int, std::size_t>> expected = {{0, 2}, {1, 6}, {2, 14}, {99, 20}};
  for (auto [bound, count] : expected) {
    ExploreStats stats =
        explore_exhaustive([](const Schedule& s) { return run_fibers(yielders(2, 2), s); },
                           [](const RunResult& r) { return r.ok(); }, bound, 10000);
    EXPECT_TRUE(stats.complete);
    EXPECT_EQ(stats.schedules, count) << "bound " << bound;
    EXPECT_EQ(stats.distinct_traces, count) << "bound " << bound;
  }
}

// 3 fibers x 2 segments: 6!/(2!2!2!) = 90 interleavings; 3! = 6 without preemption.
TEST(FiberExhaustive, ThreeFibers) {
  auto run = [](const Schedule& s) { return run_fibers(yielders(3, 1), s); };
  auto ok = [](const RunResult& r) { return r.ok(); };
  EXPECT_EQ(explore_exhaustive(run, ok, 0, 10000).schedules, 6u);
  ExploreStats all = explore_exhaustive(run, ok, 99, 10000);
  EXPECT_EQ(all.schedules, 90u);
  EXPECT_EQ(all.distinct_traces, 90u);
}

}  // namespace
}  // namespace fiber
