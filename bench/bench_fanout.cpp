// Scenario 1: fan-out throughput, 1 publisher -> 1, 4 and 64 subscriptions, 64 B and 1 KiB
// payloads; every delivery confirmed. All contenders in one process run. And one
// subscriber draining a backlog (the consumer's per-message cost alone). With one
// subscriber the publisher and the delivering thread are bound to a CPU each (common.h,
// TwoCpuPlacement), for every contender.
#include <benchmark/benchmark.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
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
