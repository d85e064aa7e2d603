// Scenario 6: acks and redelivery: throughput of one subscription with 0%, 1% and 10% of
// handler calls failing (each failed message is offered again until confirmed).
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>

#include "baselines/good.h"
#include "baselines/weak.h"
#include "broker_contender.h"
#include "common.h"
#include "main.h"

namespace bench {
namespace {

/// Rounds of messages to one subscriber whose every k-th call fails.
template <class Make>
void acks(benchmark::State& state, std::int64_t per_round, Make make_contender) {
  const std::int64_t pct = state.range(0);
  Completion done(1);
  std::int64_t calls = 0;  // the one subscriber's calls (one delivery at a time)
  std::int64_t failures = 0;
  auto contender = make_contender([&](std::size_t) -> SubHandler {
    return [&](std::string_view) {
      ++calls;
      if (pct > 0 && calls % (100 / pct) == 0) {
        ++failures;
        return false;
      }
      done.confirm(0);
      return true;
    };
  });
  const std::string payload = make_payload(64);
  prime_memory(log_bytes(per_round * state.max_iterations, payload.size()));
  std::int64_t rounds = 0;
  for (auto _ : state) {
    done.arm(1, per_round);
    for (std::int64_t m = 0; m < per_round; ++m) contender->publish(payload);
    if (!done.wait()) {
      state.SkipWithError("confirmations missing after 60 s");
      break;
    }
    ++rounds;
  }
  state.SetItemsProcessed(rounds * per_round);
  state.counters["failed_calls"] = static_cast<double>(failures);
}

void register_all() {
  using Run = std::function<void(benchmark::State&)>;
  const std::int64_t n = scaled(100'000, 100);
  const std::vector<std::pair<std::string, Run>> contenders = {
      // Backoff 0 measures the redelivery mechanism itself; the default 5 ms backoff is a
      // policy that caps a failing subscription's rate on purpose (informational).
      {"broker_lane",
       [n](benchmark::State& s) {
         acks(s, n, [](const HandlerFactory& m) {
           return std::make_unique<BrokerFanOut>(1, m, lane(broker::Millis{0}),
                                                 broker::TopicOptions{}, 0);
         });
       }},
      {"broker_lane_backoff5ms",
       [](benchmark::State& s) {
         acks(s, scaled(5'000, 100), [](const HandlerFactory& m) {
           return std::make_unique<BrokerFanOut>(1, m, lane(), broker::TopicOptions{}, 0);
         });
       }},
      {"good",
       [n](benchmark::State& s) {
         acks(s, n, [](const HandlerFactory& m) { return std::make_unique<GoodFanOut>(1, m); });
       }},
      {"weak",
       [n](benchmark::State& s) {
         acks(s, n, [](const HandlerFactory& m) { return std::make_unique<WeakFanOut>(1, m); });
       }},
  };
  for (const auto& [name, run] : contenders) {
    benchmark::RegisterBenchmark(("acks/" + name).c_str(), run)
        ->ArgName("fail_pct")
        ->Arg(0)
        ->Arg(1)
        ->Arg(10)
        // Runs of 20-50 ms, where a descheduled thread moves a row by a third: ten, so the
        // 1%-failing goal compares two averages rather than two draws.
        ->Iterations(10)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
