// The text form of schedules round-trips and rejects malformed input.
#include "fiber/schedule.h"

#include <gtest/gtest.h>

namespace fiber {
namespace {

TEST(ScheduleText, WalkRoundTrips) {
  Schedule s = Schedule::walk({0, 2, 1, 7});
  s.seed = 42;
  EXPECT_EQ(to_string(s), "walk:seed=42:choices=0,2,1,7");
  EXPECT_EQ(parse_schedule(to_string(s)), s);
}

TEST(ScheduleText, PctRoundTrips) {
  const Schedule s = Schedule::pct(123, 3, 200);
  EXPECT_EQ(to_string(s), "pct:d=3:k=200:seed=123");
  EXPECT_EQ(parse_schedule(to_string(s)), s);
}

TEST(ScheduleText, WeakMemoryRoundTripsAndOldTextsStaySequentiallyConsistent) {
  Schedule walk = Schedule::walk({1, 0});
  walk.seed = 5;
  walk.weak = true;
  EXPECT_EQ(to_string(walk), "walk:mem=weak:seed=5:choices=1,0");
  EXPECT_EQ(parse_schedule(to_string(walk)), walk);
  Schedule pct = Schedule::pct(7, 2, 50);
  pct.weak = true;
  EXPECT_EQ(to_string(pct), "pct:mem=weak:d=2:k=50:seed=7");
  EXPECT_EQ(parse_schedule(to_string(pct)), pct);
  EXPECT_FALSE(parse_schedule("walk:seed=5:choices=1,0")->weak);
  EXPECT_FALSE(parse_schedule("walk:mem=sc:seed=5")->weak);
  EXPECT_FALSE(parse_schedule("walk:mem=tso"));
}

TEST(ScheduleText, EmptyWalkRoundTrips) {
  EXPECT_EQ(parse_schedule("walk:seed=0:choices="), Schedule::walk({}));
  EXPECT_EQ(parse_schedule("walk"), Schedule::walk({}));
}

TEST(ScheduleText, RejectsMalformed) {
  EXPECT_FALSE(parse_schedule("dfs:seed=1"));
  EXPECT_FALSE(parse_schedule("walk:seed=x"));
  EXPECT_FALSE(parse_schedule("walk:choices=1,,2"));
  EXPECT_FALSE(parse_schedule("pct:d=0"));
  EXPECT_FALSE(parse_schedule("walk:bogus=1"));
}

}  // namespace
}  // namespace fiber
