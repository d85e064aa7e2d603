// SPEC R19 `always` with many threads: publishers and ackers share syncs (group commit),
// and a power cut on the simulated disk at a random moment loses nothing any of them saw
// return before the cut. A follower released before the leader's sync finished would
// return with its record still volatile, and so would a write made while a sync ran that
// the sync counted in; the cut then takes it back.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "simfs/sim_file_system.h"

namespace broker {
namespace {

using sim::SimFileSystem;

BrokerOptions on(const std::shared_ptr<SimFileSystem>& disk) {
  StorageOptions o;
  o.directory = "/store";
  o.file_system = disk;
  o.segment_bytes = 4096;  // rolls happen during the run
  return BrokerOptions::synchronous().with_storage(o);
}

PullOptions pull_from_beginning() {
  PullOptions o;
  o.start = StartPosition::beginning();
  o.ack_timeout = Millis{1'000'000};
  o.max_deliveries = 0;
  return o;
}

struct Seen {
  std::mutex mu;
  std::map<Offset, std::string> published;  // returned before the cut
  Offset committed = 0;                     // the highest position an ack returned with
};

/// One round: 6 publishers and an acker until the disk dies a few points after a random
/// delay; then a reboot and a check of everything seen.
void round(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto disk = std::make_shared<SimFileSystem>();
  // A sync takes a while, as a disk's does: writes made while it runs are not covered by
  // it, and a syncer that counted them in would return them as durable.
  disk->set_sync_latency(std::chrono::microseconds(50 + rng() % 150));
  Seen seen;
  {
    Broker b(on(disk));
    b.create_topic("t");
    b.subscribe_pull("t", "s", pull_from_beginning());
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int p = 0; p < 6; ++p) {
      threads.emplace_back([&, p] {
        for (int i = 0; i < 2000 && !stop; ++i) {
          const std::string payload = "p" + std::to_string(p) + "-" + std::to_string(i);
          const Offset o = b.publish("t", payload);
          if (disk->crashed()) return;  // returned in a dead process: promises nothing
          std::lock_guard<std::mutex> lock(seen.mu);
          seen.published[o] = payload;
        }
      });
    }
    // One acker, acking in offset order: the position after its ack is exactly what that
    // ack's commit saved (a second acker could move it with a commit not yet synced).
    {
      threads.emplace_back([&] {
        const std::string member = "w";
        while (!stop) {
          for (const Received& r : b.poll("t", "s", member, 4)) {
            if (!b.ack(r.receipt)) continue;
            const Offset committed = b.stats("t", "s").committed;
            if (disk->crashed()) return;
            std::lock_guard<std::mutex> lock(seen.mu);
            seen.committed = std::max(seen.committed, committed);
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 3000));
    // Other threads pass points meanwhile: arm one a little ahead, again if it was passed.
    for (bool armed = false; !armed;) {
      try {
        disk->crash_at(disk->points() + 1 + rng() % 8);
        armed = true;
      } catch (const std::invalid_argument&) {
      }
    }
    while (!disk->crashed()) std::this_thread::yield();
    stop = true;
    for (auto& t : threads) t.join();
  }
  SimFileSystem::CrashOptions cut;
  cut.seed = seed;
  // Every other cut loses every unsynced byte: a write wrongly counted durable is gone for
  // sure, where a torn tail may keep it by chance.
  cut.torn_tail = seed % 2 == 0;
  disk->crash(cut);
  Broker b(on(disk));
  b.subscribe_pull("t", "check", pull_from_beginning());
  std::map<Offset, std::string> kept;
  for (;;) {
    auto got = b.poll("t", "check", "c", 1000);
    if (got.empty()) break;
    for (const Received& r : got) kept[r.message->offset()] = r.message->payload();
  }
  for (const auto& [offset, payload] : seen.published) {
    auto it = kept.find(offset);
    ASSERT_TRUE(it != kept.end() && it->second == payload)
        << "seed " << seed << ": publish of " << payload << " returned offset " << offset
        << " before the power cut, but after it the offset holds "
        << (it == kept.end() ? std::string("nothing") : it->second) << " (end " << b.end_offset("t")
        << ")";
  }
  EXPECT_GE(b.stats("t", "s").committed, seen.committed)
      << "seed " << seed << ": an ack returned with the position at " << seen.committed;
}

TEST(DurableGroupCommit, EveryPublishAndAckThatReturnedBeforeAPowerCutSurvives) {
  std::uint64_t first = std::random_device{}();
  if (const char* s = std::getenv("GROUP_COMMIT_SEED")) first = std::stoull(s);
  for (std::uint64_t i = 0; i < 60; ++i) {
    SCOPED_TRACE("replay with GROUP_COMMIT_SEED=" + std::to_string(first + i));
    round(first + i);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// FsyncPolicy::every: nothing waits for a sync, a flusher makes written records durable
// within the interval. A generous wait (40 intervals) keeps the check about the promise,
// not about speed.
TEST(DurableInterval, AFlusherMakesPublishesAndCommitsDurableWithinTheInterval) {
  auto disk = std::make_shared<SimFileSystem>();
  StorageOptions o;
  o.directory = "/store";
  o.file_system = disk;
  o.publish_sync = FsyncPolicy::every(Millis{5});
  o.commit_sync = FsyncPolicy::every(Millis{5});
  auto b = std::make_unique<Broker>(BrokerOptions::synchronous().with_storage(o));
  b->create_topic("t");
  b->subscribe_pull("t", "s", pull_from_beginning());
  for (int i = 0; i < 5; ++i) b->publish("t", "m" + std::to_string(i));
  for (const Received& r : b->poll("t", "s", "w", 3)) ASSERT_TRUE(b->ack(r.receipt));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The process dies with the broker still open (its close would sync everything), then
  // the power goes: only what the flusher synced survives.
  for (bool armed = false; !armed;) {
    try {
      disk->crash_at(disk->points());
      armed = true;
    } catch (const std::invalid_argument&) {
    }
  }
  b.reset();  // a dead process: its closing syncs never reach the disk
  SimFileSystem::CrashOptions cut;
  cut.torn_tail = false;
  disk->crash(cut);
  Broker again(BrokerOptions::synchronous().with_storage(o));
  EXPECT_EQ(again.end_offset("t"), 5u);
  EXPECT_EQ(again.stats("t", "s").committed, 3u);
}

}  // namespace
}  // namespace broker
