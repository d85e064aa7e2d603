// The scheduler finds classic concurrency bugs: a lost update and a depth-2 ordering bug.
#include <gtest/gtest.h>

#include "fiber/exhaustive.h"
#include "fiber/run.h"
#include "sync/sync.h"

namespace fiber {
namespace {

using broker::sync::Mutex;
using broker::sync::MutexLock;

// Two increments, each locking the read and the write separately: a lost update.
struct LostUpdate {
  std::shared_ptr<Mutex> mu = std::make_shared<Mutex>();
  std::shared_ptr<int> counter = std::make_shared<int>(0);
  std::vector<std::function<void()>> bodies() const {
    auto body = [mu = mu, counter = counter] {
      int seen = 0;
      {
        MutexLock lock(*mu);
        seen = *counter;
      }
      MutexLock lock(*mu);
      *counter = seen + 1;
    };
    return {body, body};
  }
};

TEST(FiberBugs, RandomWalkFindsTheLostUpdate) {
  int found_at = -1;
  for (int seed = 1; seed <= 200 && found_at < 0; ++seed) {
    LostUpdate p;
    RunResult r = run_fibers(p.bodies(), Schedule::random(seed));
    ASSERT_TRUE(r.ok()) << r.describe();
    if (*p.counter != 2) found_at = seed;
  }
  EXPECT_GE(found_at, 1) << "lost update not found in 200 random walks";
}

TEST(FiberBugs, ExhaustiveSearchFindsTheLostUpdateWithOnePreemption) {
  std::shared_ptr<int> counter;
  auto run = [&](const Schedule& s) {
    LostUpdate p;
    counter = p.counter;
    return run_fibers(p.bodies(), s);
  };
  auto ok = [&](const RunResult& r) { return r.ok() && *counter == 2; };
  EXPECT_TRUE(explore_exhaustive(run, ok, 0, 1000).complete);  // no bug without preemption
  ExploreStats stats = explore_exhaustive(run, ok, 1, 1000);
  ASSERT_TRUE(stats.first_failure);
  // The printed schedule replays the lost update.
  const Schedule replay = *parse_schedule(to_string(stats.first_failure->schedule));
  EXPECT_FALSE(ok(run(replay)));
}

// Depth 2: the checker must run after `flag = 1` and before `flag = 2`, and both writes
// sit behind a dozen scheduling points.
struct Depth2 {
  std::shared_ptr<int> flag = std::make_shared<int>(0);
  std::shared_ptr<bool> bug = std::make_shared<bool>(false);
  std::vector<std::function<void()>> bodies() const {
    return {[flag = flag] {
              for (int i = 0; i < 12; ++i) yield("work");
              *flag = 1;
              yield("between");
              *flag = 2;
            },
            [flag = flag, bug = bug] {
              for (int i = 0; i < 12; ++i) yield("work");
              if (*flag == 1) *bug = true;
            }};
  }
};

// n = 2 fibers, k ~ 28 points: PCT with d = 2 finds it with p >= 1/(2*28) per run.
TEST(FiberBugs, PctFindsADepthTwoBug) {
  int found = 0;
  constexpr int kRuns = 400;
  for (int seed = 1; seed <= kRuns; ++seed) {
    Depth2 p;
    RunResult r = run_fibers(p.bodies(), Schedule::pct(seed, 2, 28));
    ASSERT_TRUE(r.ok());
    if (*p.bug) ++found;
  }
  EXPECT_GE(found, kRuns / 56 / 2) << "PCT found the depth-2 bug " << found << " times";
  // Without change points (d = 1) the priorities never interleave the two writes.
  for (int seed = 1; seed <= 50; ++seed) {
    Depth2 p;
    run_fibers(p.bodies(), Schedule::pct(seed, 1, 28));
    EXPECT_FALSE(*p.bug);
  }
}

}  // namespace
}  // namespace fiber
