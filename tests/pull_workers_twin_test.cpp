// Real-thread twin of properties/fiber/pull_property.cpp (label `stress`, run under tsan):
// publishers, and poll / ack / nack workers on one pull subscription while another thread
// moves the clock and expires deadlines, so messages really time out and come back.
// seed004_demo_stress_test covers acks with no deadline passing; this adds nack, expire
// and dead letters. Checked at the end (Jepsen's queue names): nothing lost, no message
// held twice, an acked message never comes back, new offsets in order, counters add up.
// The test is a loop of small rounds (testing::StressLoop: base x BROKER_BUDGET, or
// STRESS_ITERATIONS); each round's sizes and each worker's op choices come from the round's
// seed (printed with the line that replays it); the interleaving is the OS's.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::StressLoop;

constexpr int kPublishers = 2;
constexpr int kWorkers = 3;
constexpr int kMaxDeliveries = 3;
// Rounds at BROKER_BUDGET=1: 200x the 5 rounds it ran before it looped.
constexpr int kRounds = 1000;

/// What one worker saw; written by that worker only, read after it joined.
struct WorkerLog {
  std::vector<std::pair<Offset, int>> offers;  // (offset, attempt) in poll order
  std::vector<Offset> acked;                   // accepted acks
  std::vector<std::string> failures;           // "acked-came-back: ..." found during the run
};

/// A logical clock shared by all threads: a stamp taken after a call returned is smaller
/// than a stamp taken before a later call started.
struct Stamps {
  std::atomic<std::uint64_t> seq{1};
  std::vector<std::atomic<std::uint64_t>> acked_at;  // 0: never acked
  explicit Stamps(std::size_t n) : acked_at(n) {}
  std::uint64_t next() { return seq.fetch_add(1); }
};

void RunWorker(Broker& b, ManualClock& clock, Stamps& stamps, const std::atomic<bool>& stop,
               std::uint64_t seed, const std::string& member, WorkerLog& log) {
  std::mt19937_64 rng(seed);
  std::vector<Offset> mine;
  auto remember = [&](const std::vector<Received>& got, std::uint64_t invoked) {
    for (const Received& r : got) {
      const Offset o = r.message->offset();
      log.offers.push_back({o, r.attempt});
      const std::uint64_t acked = stamps.acked_at[o].load();
      if (acked != 0 && acked < invoked)
        log.failures.push_back("acked-came-back: offset " + std::to_string(o) + " polled by " +
                               member + " after its ack returned");
      mine.push_back(o);
    }
  };
  auto settle = [&](bool ack_it) {
    if (mine.empty()) return;
    const Offset o = mine.front();
    mine.erase(mine.begin());
    if (ack_it) {
      if (b.ack(Receipt{"t", "p", member, o}, clock.now())) {
        stamps.acked_at[o].store(stamps.next());
        log.acked.push_back(o);
      }
    } else {
      (void)b.nack(Receipt{"t", "p", member, o}, clock.now());
    }
  };
  while (!stop.load()) {
    switch (rng() % 5) {
      case 0:
      case 1: {
        const std::uint64_t invoked = stamps.next();
        remember(b.poll("t", "p", member, 1 + rng() % 3, clock.now()), invoked);
        break;
      }
      case 2:
      case 3:
        settle(true);
        break;
      default:
        settle(rng() % 4 == 0 ? false : true);
        break;
    }
    std::this_thread::yield();  // a spinning worker would starve the expirer on 2 cores
  }
}

// After the run: expire everything, poll and ack what is left, until nothing comes back.
void FinalDrain(Broker& b, Stamps& stamps, WorkerLog& log) {
  const Time later = at(Millis{1'000'000'000});
  for (;;) {
    const bool moved = !b.expire(later).empty();
    const std::uint64_t invoked = stamps.next();
    const std::vector<Received> got = b.poll("t", "p", "final", 1000, later);
    for (const Received& r : got) {
      const Offset o = r.message->offset();
      log.offers.push_back({o, r.attempt});
      if (stamps.acked_at[o].load() != 0 && stamps.acked_at[o].load() < invoked)
        log.failures.push_back("acked-came-back: offset " + std::to_string(o) + " in the drain");
      if (b.ack(Receipt{"t", "p", "final", o}, later)) log.acked.push_back(o);
    }
    if (got.empty() && !moved) return;
  }
}

std::string Check(const std::vector<WorkerLog>& logs, const Broker& b, int total) {
  std::ostringstream f;
  std::map<std::pair<Offset, int>, int> offer_count;
  std::map<Offset, int> max_attempt, acks;
  std::uint64_t delivered = 0, redelivered = 0, confirmed = 0;
  for (std::size_t w = 0; w < logs.size(); ++w) {
    for (const auto& s : logs[w].failures) f << s << "\n";
    long long last_new = -1;
    for (const auto& [o, a] : logs[w].offers) {
      ++delivered;
      if (a > 1) ++redelivered;
      if (++offer_count[{o, a}] == 2)
        f << "double-held: offset " << o << " attempt " << a << " handed out twice\n";
      max_attempt[o] = std::max(max_attempt[o], a);
      if (a == 1) {
        if (static_cast<long long>(o) <= last_new)
          f << "nonmonotonic: worker " << w << " got new offset " << o << " after " << last_new
            << "\n";
        last_new = static_cast<long long>(o);
      }
    }
    for (Offset o : logs[w].acked) {
      ++confirmed;
      if (++acks[o] == 2) f << "duplicated: offset " << o << " acked twice\n";
    }
  }
  for (const auto& [o, top] : max_attempt) {
    for (int a = 1; a <= top; ++a)
      if (!offer_count.count({o, a}))
        f << "duplicated-beyond-redelivery: offset " << o << " attempt " << top
          << " without attempt " << a << "\n";
  }
  std::set<Offset> dead;
  for (const DeadLetter& d : b.dead_letters("t", "p")) {
    if (!dead.insert(d.message->offset()).second)
      f << "duplicated: offset " << d.message->offset() << " dead-lettered twice\n";
  }
  for (Offset o = 0; o < static_cast<Offset>(total); ++o) {
    if (!acks.count(o) && !dead.count(o)) f << "lost: offset " << o << "\n";
    if (acks.count(o) && dead.count(o)) f << "unexpected: offset " << o << " acked and dead\n";
  }
  const SubscriptionStats s = b.stats("t", "p");
  if (s.delivered != delivered || s.redelivered != redelivered || s.confirmed != confirmed ||
      s.dead_lettered != dead.size() || s.in_flight != 0 || s.backlog != 0 ||
      s.delivered != s.confirmed + s.dead_lettered + s.redelivered)
    f << "counters: stats " << s << "; seen delivered=" << delivered
      << " redelivered=" << redelivered << " confirmed=" << confirmed << " dead=" << dead.size()
      << "\n";
  return f.str();
}

TEST(PullWorkersTwin, R11ConcurrentPollAckNackExpireLoseNothingAndNeverDoubleHold) {
  StressLoop(kRounds, [](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int per_publisher = 10 + static_cast<int>(rng() % 31);  // was 300
    const int total = kPublishers * per_publisher;
    // Clock ticks the expirer goes on for once the publishers are done (was 400).
    const int expire_after = 10 + static_cast<int>(rng() % 41);
    auto clock = std::make_shared<ManualClock>(Time{});
    Broker b{testing::SyncBroker(clock)};
    b.create_topic("t");
    b.subscribe_pull("t", "p",
                     testing::Pull(Millis{5}, kMaxDeliveries, {}, StartPosition::beginning()));
    Stamps stamps(static_cast<std::size_t>(total));
    std::vector<WorkerLog> logs(kWorkers + 1);
    std::atomic<int> publishing{kPublishers};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int p = 0; p < kPublishers; ++p) {
      threads.emplace_back([&] {
        for (int i = 0; i < per_publisher; ++i) b.publish("t", "m");
        publishing.fetch_sub(1);
      });
    }
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([&, w] {
        RunWorker(b, *clock, stamps, stop, seed * 31 + static_cast<std::uint64_t>(w),
                  "w" + std::to_string(w), logs[w]);
      });
    }
    std::thread expirer([&] {
      int after = 0;  // keep expiring for a while after the publishers finished
      while (after < expire_after) {
        clock->advance(Millis{1});
        (void)b.expire(clock->now());
        if (publishing.load() == 0) ++after;
        std::this_thread::yield();
      }
      stop = true;
    });
    expirer.join();
    for (auto& t : threads) t.join();
    FinalDrain(b, stamps, logs[kWorkers]);
    EXPECT_EQ(Check(logs, b, total), "");
  });
}

}  // namespace
}  // namespace broker
