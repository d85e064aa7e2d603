// Fault schedules are data drawn from a seed: the same seed draws the same schedule (a run
// replays from one line), every kind listed is drawn and no other, and the kinds are typed.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "conformance/faults.h"

namespace conformance {
namespace {

bool same(const std::vector<Fault>& a, const std::vector<Fault>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].at_ms != b[i].at_ms || a[i].kind != b[i].kind || a[i].down_ms != b[i].down_ms) {
      return false;
    }
  }
  return true;
}

FaultOptions options(std::uint64_t seed, const std::string& kinds, double seconds = 60) {
  FaultOptions o;
  o.seed = seed;
  o.kinds = kinds;
  o.seconds = seconds;
  return o;
}

TEST(FaultSchedule, TheSameSeedDrawsTheSameSchedule) {
  std::set<std::int64_t> first_times;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    for (const std::string kinds : {"both", "pause", "kill9,pause,lose-unsynced"}) {
      const std::vector<Fault> a = fault_schedule(options(seed, kinds));
      EXPECT_TRUE(same(a, fault_schedule(options(seed, kinds)))) << "seed " << seed << " " << kinds;
      ASSERT_FALSE(a.empty());
      first_times.insert(a.size() > 1 ? a[1].at_ms : a[0].at_ms);
    }
  }
  EXPECT_GT(first_times.size(), 10u) << "the seed hardly changes the schedule";
}

TEST(FaultSchedule, EveryListedKindIsDrawnAndNoOtherWithinItsBounds) {
  const std::vector<Fault> s = fault_schedule(options(3, "pause,lose-unsynced,restart", 300));
  std::set<Fault::Kind> seen;
  for (const Fault& f : s) {
    seen.insert(f.kind);
    EXPECT_GE(f.at_ms, 1000);
    EXPECT_LT(f.at_ms, 299000);
    switch (f.kind) {
      case Fault::Kind::kPause:
        EXPECT_GE(f.down_ms, 200);
        EXPECT_LT(f.down_ms, 2500);
        break;
      case Fault::Kind::kLoseUnsynced:
        EXPECT_LT(f.down_ms, 800);
        break;
      default:
        EXPECT_EQ(f.down_ms, 0);
    }
  }
  EXPECT_EQ(seen, (std::set<Fault::Kind>{Fault::Kind::kPause, Fault::Kind::kLoseUnsynced,
                                         Fault::Kind::kRestart}));
}

// "both" keeps the schedules of the runs recorded before the kinds were a list.
TEST(FaultSchedule, BothIsKill9AndRestart) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    EXPECT_TRUE(same(fault_schedule(options(seed, "both")),
                     fault_schedule(options(seed, "kill9,restart"))));
  }
}

// A printed schedule reads back as the same schedule (the replay line runs what ran).
TEST(FaultSchedule, APrintedScheduleReadsBackTheSame) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    const std::vector<Fault> s =
        fault_schedule(options(seed, "kill9,restart,pause,lose-unsynced", 5 + seed % 60));
    EXPECT_TRUE(same(parse_schedule(schedule_text(s), 5 + seed % 60), s)) << schedule_text(s);
  }
  EXPECT_TRUE(parse_schedule("none", 10).empty());
  EXPECT_EQ(schedule_text({}), "none");
}

TEST(FaultSchedule, AMalformedScheduleIsATypedError) {
  for (const std::string bad : {"", "1000", "1000:kill9", "1000:restart:5", "x:kill9:1",
                                "1000:nap:5", "2000:pause:5,1000:pause:5", "1000:kill9:5,",
                                "99000:kill9:1", "1000:kill9:-1", "1000:kill9,pause:5"}) {
    EXPECT_THROW(parse_schedule(bad, 60), std::invalid_argument) << "'" << bad << "'";
  }
}

TEST(FaultKinds, AnUnknownRepeatedOrEmptyKindIsATypedError) {
  for (const std::string bad : {"", "kill", "kill9,kill9", "pause,", "both,pause", "KILL9"}) {
    EXPECT_THROW(fault_kinds(bad), std::invalid_argument) << "'" << bad << "'";
  }
  EXPECT_EQ(fault_kinds("lose-unsynced,pause"),
            (std::vector<Fault::Kind>{Fault::Kind::kLoseUnsynced, Fault::Kind::kPause}));
}

}  // namespace
}  // namespace conformance
