// Scenario 4: isolation: 4 fast subscriptions plus 1 stalled (blocked on a latch released
// at the end; stall:1) against the 4 fast ones alone (stall:0; a 5th fast one would take
// CPU the stalled one does not): the fast ones' throughput and the publish-call p99.
#include <benchmark/benchmark.h>

#include <functional>
#include <latch>
#include <memory>
#include <string>

#include "baselines/good.h"
#include "baselines/zmq.h"
#include "broker_contender.h"
#include "common.h"
#include "main.h"

namespace bench {
namespace {

constexpr std::size_t kFast = 4;

/// Rounds of messages; waits for the 4 fast subscribers; times every publish call.
template <class Make>
void isolation(benchmark::State& state, Make make_contender) {
  const bool stall = state.range(0) != 0;
  const std::int64_t per_round = scaled(20'000, 100);
  Completion done(kFast + 1);
  std::latch release(1);
  Histogram publish_ns;
  {
    auto contender = make_contender(stall ? kFast + 1 : kFast, [&](std::size_t i) -> SubHandler {
      if (i == kFast && stall) {
        return [&](std::string_view) {
          release.wait();
          return true;
        };
      }
      return [&done, i](std::string_view) {
        done.confirm(i);
        return true;
      };
    });
    const std::string payload = make_payload(64);
    std::int64_t rounds = 0;
    for (auto _ : state) {
      done.arm(kFast, per_round);
      for (std::int64_t m = 0; m < per_round; ++m) {
        const std::int64_t t = now_ns();
        contender->publish(payload);
        publish_ns.record(now_ns() - t);
      }
      if (!done.wait()) {
        state.SkipWithError("fast deliveries missing after 60 s");
        break;
      }
      ++rounds;
    }
    state.SetItemsProcessed(rounds * per_round);
    release.count_down();  // before the contender stops its threads
  }
  state.counters["pub_p50_ns"] = publish_ns.quantile(0.5);
  state.counters["pub_p99_ns"] = publish_ns.quantile(0.99);
}

template <class C>
auto plain() {
  return
      [](std::size_t subs, const HandlerFactory& make) { return std::make_unique<C>(subs, make); };
}

void register_all() {
  using Run = std::function<void(benchmark::State&)>;
  const std::vector<std::pair<std::string, Run>> contenders = {
      {"broker_lane",
       [](benchmark::State& s) {
         isolation(s, [](std::size_t subs, const HandlerFactory& m) {
           return std::make_unique<BrokerFanOut>(subs, m, lane());
         });
       }},
      {"broker_pool",
       [](benchmark::State& s) {
         isolation(s, [](std::size_t subs, const HandlerFactory& m) {
           return std::make_unique<BrokerFanOut>(subs, m, pool(2));
         });
       }},
      {"good", [](benchmark::State& s) { isolation(s, plain<GoodFanOut>()); }},
      {"zmq", [](benchmark::State& s) { isolation(s, plain<ZmqFanOut>()); }},
  };
  for (const auto& [name, run] : contenders) {
    benchmark::RegisterBenchmark(("isolation/" + name).c_str(), run)
        ->ArgName("stall")
        ->Arg(0)
        ->Arg(1)
        ->Iterations(5)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
