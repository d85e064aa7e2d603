// Scenario 1: fan-out throughput, 1 publisher -> 1, 4 and 64 subscriptions, 64 B and 1 KiB
// payloads; every delivery confirmed. All contenders in one process run. And one
// subscriber draining a backlog (the consumer's per-message cost alone). With one
// subscriber the publisher and the delivering thread are bound to a CPU each (common.h,
// TwoCpuPlacement), for every contender.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "baselines/good.h"
#include "baselines/signals2.h"
#include "baselines/spsc.h"
#include "baselines/weak.h"
#include "baselines/zmq.h"
#include "broker_contender.h"
#include "common.h"
#include "main.h"

namespace bench {
namespace {

/// Publishes rounds of messages and waits until every subscriber confirmed each round.
template <class Make>
void fan_out(benchmark::State& state, Make make_contender) {
  const auto subs = static_cast<std::size_t>(state.range(0));
  const auto bytes = static_cast<std::size_t>(state.range(1));
  const std::int64_t per_round =
      scaled(std::max<std::int64_t>(500, 200'000 / static_cast<std::int64_t>(subs)), 50);
  Completion done(subs);
  // One subscriber: publisher and consumer on a CPU each, as in bench_latency (with more
  // subscribers than CPUs the kernel places them).
  TwoCpuPlacement placement;
  const bool place = subs == 1;
  auto contender = make_contender(subs, [&](std::size_t i) -> SubHandler {
    return [&done, &placement, place, i, bytes](std::string_view p) {
      if (place) placement.on_delivery();
      if (p.size() != bytes) return false;
      done.confirm(i);
      return true;
    };
  });
  if (place) placement.bind_publisher();
  const std::string payload = make_payload(bytes);
  prime_memory(log_bytes(per_round * state.max_iterations, bytes));
  std::int64_t rounds = 0;
  for (auto _ : state) {
    done.arm(subs, per_round);
    for (std::int64_t m = 0; m < per_round; ++m) contender->publish(payload);
    if (!done.wait()) {
      state.SkipWithError("deliveries missing after 60 s");
      break;
    }
    ++rounds;
  }
  const auto msgs = static_cast<double>(rounds * per_round);
  state.SetItemsProcessed(rounds * per_round);
  state.counters["deliveries_per_s"] =
      benchmark::Counter(msgs * static_cast<double>(subs), benchmark::Counter::kIsRate);
}

/// The consumer's side alone: each round's first delivery waits until the whole round is
/// published, so the subscriber drains a backlog of per_round - 1 messages, and the time
/// counted is from the end of publishing to the last confirmation (consumer-bound: how
/// fast one subscriber works through messages that are all ready).
template <class Make>
void backlog(benchmark::State& state, Make make_contender) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::int64_t per_round = scaled(200'000, 50);
  Completion done(1);
  std::atomic<bool> published{false};
  auto contender = make_contender(1, [&](std::size_t) -> SubHandler {
    return [&done, &published, bytes](std::string_view p) {
      while (!published.load(std::memory_order_acquire)) std::this_thread::yield();
      if (p.size() != bytes) return false;
      done.confirm(0);
      return true;
    };
  });
  const std::string payload = make_payload(bytes);
  prime_memory(log_bytes(per_round * state.max_iterations, bytes));
  std::int64_t rounds = 0;
  for (auto _ : state) {
    published.store(false, std::memory_order_release);
    done.arm(1, per_round);
    for (std::int64_t m = 0; m < per_round; ++m) contender->publish(payload);
    const std::int64_t start = now_ns();
    published.store(true, std::memory_order_release);
    if (!done.wait()) {
      state.SkipWithError("deliveries missing after 60 s");
      break;
    }
    state.SetIterationTime(static_cast<double>(now_ns() - start) / 1e9);
    ++rounds;
  }
  state.SetItemsProcessed(rounds * per_round);
}

/// A throughput goal as a paired comparison: the broker and one contender, both built once
/// and alive side by side (the idle one's threads sleep), run `subs` subscriptions of 64-byte
/// messages in turns of one round each, alternating, every turn timed on its own;
/// counters: each side's median rate and the median of the pairs' ratios (broker / other).
/// Neighbouring turns share the machine's phase; the separate rows above run minutes apart,
/// and a phase moved them by 2-3x between tables (BENCHMARKS.md).
template <class MakeBroker, class MakeOther>
void fan_out_paired(benchmark::State& state, MakeBroker make_broker, MakeOther make_other) {
  const auto subs = static_cast<std::size_t>(state.range(0));
  // A turn of 200,000 deliveries, as fan_out's rounds, or of 1,000 messages to 64 (the good
  // design's 64 threads take about half a second for those on 2 cores).
  const std::int64_t per_round =
      scaled(std::max<std::int64_t>(1000, 200'000 / static_cast<std::int64_t>(subs)), 50);
  const int pairs = 15;
  const std::string payload = make_payload(64);
  TwoCpuPlacement placement;
  const bool place = subs == 1;
  struct Side {
    Completion done;
    std::vector<double> rates;
    std::function<void(std::string_view)> publish;
  };
  Side side[2] = {{Completion(subs), {}, {}}, {Completion(subs), {}, {}}};
  auto handlers = [&](Side& s) {
    return [&s, &placement, place](std::size_t i) -> SubHandler {
      return [&s, &placement, place, i](std::string_view p) {
        if (place) placement.on_delivery();
        if (p.size() != 64) return false;
        s.done.confirm(i);
        return true;
      };
    };
  };
  auto broker = make_broker(subs, handlers(side[0]));
  auto other = make_other(subs, handlers(side[1]));
  side[0].publish = [&](std::string_view p) { broker->publish(p); };
  side[1].publish = [&](std::string_view p) { other->publish(p); };
  if (place) placement.bind_publisher();
  prime_memory(log_bytes(per_round * pairs, payload.size()));
  std::vector<double> ratio;
  bool ok = true;
  for (auto _ : state) {
    for (int pair = 0; pair < pairs && ok; ++pair) {
      for (int turn = 0; turn < 2 && ok; ++turn) {
        // Odd pairs run the contender first, so neither side always follows the other.
        Side& s = side[pair % 2 == 0 ? turn : 1 - turn];
        const std::int64_t t0 = now_ns();
        s.done.arm(subs, per_round);
        for (std::int64_t m = 0; m < per_round; ++m) s.publish(payload);
        ok = s.done.wait();
        s.rates.push_back(static_cast<double>(per_round) * 1e9 /
                          static_cast<double>(now_ns() - t0));
      }
      if (ok) ratio.push_back(side[0].rates.back() / side[1].rates.back());
    }
  }
  if (!ok) state.SkipWithError("deliveries missing after 60 s");
  state.counters["broker_per_s"] = median(side[0].rates);
  state.counters["other_per_s"] = median(side[1].rates);
  state.counters["ratio"] = median(ratio);
}

template <class C>
std::unique_ptr<C> plain(std::size_t subs, const HandlerFactory& make) {
  return std::make_unique<C>(subs, make);
}

void register_all() {
  using Factory = std::function<void(benchmark::State&)>;
  struct Contender {
    std::string name;
    Factory run;
  };
  const std::vector<Contender> contenders = {
      {"broker",
       [](benchmark::State& s) {
         fan_out(s, [&](std::size_t subs, const HandlerFactory& make) {
           // SPEC R15: lanes for few subscriptions, the 2-thread pool for many.
           return std::make_unique<BrokerFanOut>(subs, make, subs <= 4 ? lane() : pool(2));
         });
       }},
      {"weak", [](benchmark::State& s) { fan_out(s, plain<WeakFanOut>); }},
      {"good", [](benchmark::State& s) { fan_out(s, plain<GoodFanOut>); }},
      {"spsc", [](benchmark::State& s) { fan_out(s, plain<SpscFanOut>); }},
      {"zmq", [](benchmark::State& s) { fan_out(s, plain<ZmqFanOut>); }},
      {"signals2", [](benchmark::State& s) { fan_out(s, plain<Signals2FanOut>); }},
  };
  for (const auto& c : contenders) {
    benchmark::RegisterBenchmark(("fanout/" + c.name).c_str(), c.run)
        ->ArgNames({"subs", "bytes"})
        ->ArgsProduct({{1, 4, 64}, {64, 1024}})
        ->Iterations(3)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }  // A backlog has no bound in the broker and the good design; ZeroMQ's high-water mark and
  // the ring's capacity would drop or block a round, so only those two drain one.
  const std::vector<Contender> drains = {
      {"broker",
       [](benchmark::State& s) {
         backlog(s, [&](std::size_t subs, const HandlerFactory& make) {
           return std::make_unique<BrokerFanOut>(subs, make, lane());
         });
       }},
      {"good", [](benchmark::State& s) { backlog(s, plain<GoodFanOut>); }},
  };
  // The throughput goals from paired turns (fan_out_paired): the broker as above against
  // the contender each goal names.
  auto broker_for = [](std::size_t subs, const HandlerFactory& make) {
    return std::make_unique<BrokerFanOut>(subs, make, subs <= 4 ? lane() : pool(2));
  };
  // The same broker keeping its log on disk (publish_sync none: a store into the segment's
  // mapping per publish) in a fresh directory under /tmp, against ZeroMQ (issue goal: 1x).
  auto durable_for = [](std::size_t subs, const HandlerFactory& make) {
    struct Durable {
      TempDir dir;
      BrokerFanOut broker;
      Durable(std::size_t subs, const HandlerFactory& make)
          : broker(subs, make, lane().with_storage(storage(dir.path()))) {}
      static broker::StorageOptions storage(const std::string& path) {
        broker::StorageOptions o;
        o.directory = path;
        o.publish_sync = broker::FsyncPolicy::none();
        o.commit_sync = broker::FsyncPolicy::none();
        return o;
      }
      void publish(std::string_view p) { broker.publish(p); }
    };
    return std::make_unique<Durable>(subs, make);
  };
  const std::vector<std::pair<std::string, Factory>> against = {
      {"good", [=](benchmark::State& s) { fan_out_paired(s, broker_for, plain<GoodFanOut>); }},
      {"zmq", [=](benchmark::State& s) { fan_out_paired(s, broker_for, plain<ZmqFanOut>); }},
      {"durable_none_zmq",
       [=](benchmark::State& s) { fan_out_paired(s, durable_for, plain<ZmqFanOut>); }},
  };
  for (const auto& [name, run] : against) {
    auto* b = benchmark::RegisterBenchmark(("fanout_paired/" + name).c_str(), run);
    if (name != "durable_none_zmq") b->Args({name == "good" ? 64 : 4});
    b->ArgNames({"subs"})->Args({1})->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  for (const auto& c : drains) {
    benchmark::RegisterBenchmark(("backlog/" + c.name).c_str(), c.run)
        ->ArgNames({"bytes"})
        ->Arg(64)
        ->Iterations(3)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
