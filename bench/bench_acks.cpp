// Scenario 6: acks and redelivery: throughput of one subscription with 0%, 1% and 10% of
// handler calls failing (each failed message is offered again until confirmed).
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baselines/good.h"
#include "baselines/weak.h"
#include "broker_contender.h"
#include "common.h"
#include "main.h"

namespace bench {
namespace {

/// Which of the one subscriber's calls fail: every `every`-th call (retries count), none
/// where `every` is 0. Only the delivering thread uses it while a round runs. A countdown,
/// not `calls % every`: the handler then costs the same in rounds with and without failures
/// but for the failures themselves. On a cache line of its own because the handler writes it
/// at every call: sharing a line with the publisher's locals (where the stack put them
/// changes from process to process) cost the failing rounds of some processes 30% and of
/// others nothing, the publisher's reads taking the line back at every message.
struct alignas(64) FailureCountdown {
  std::int64_t every = 0;
  std::int64_t until_failure = 0;
  std::int64_t failures = 0;

  /// Starts counting anew: the every-th call from now fails first.
  void set(std::int64_t calls_between) {
    every = calls_between;
    until_failure = calls_between;
  }
  /// One call: whether it fails.
  bool now() {
    if (every == 0 || --until_failure > 0) return false;
    until_failure = every;
    ++failures;
    return true;
  }
};

/// Rounds of messages to one subscriber whose every k-th call fails.
template <class Make>
void acks(benchmark::State& state, std::int64_t per_round, Make make_contender) {
  const std::int64_t pct = state.range(0);
  Completion done(1);
  FailureCountdown fail;
  fail.set(pct > 0 ? 100 / pct : 0);
  auto contender = make_contender([&](std::size_t) -> SubHandler {
    return [&](std::string_view) {
      if (fail.now()) return false;
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
  state.counters["failed_calls"] = static_cast<double>(fail.failures);
}

/// The 1%-failing goal as a paired comparison: one subscriber, rounds without failures and
/// rounds with 1% of calls failing, alternating, each round timed on its own; counters: each
/// kind's median rate and the median of the pairs' ratios (failing / not). Neighbouring rounds
/// share the machine's phase, which moves separate runs by more than the goal's 5%.
template <class Make>
void acks_paired(benchmark::State& state, std::int64_t per_round, Make make_contender) {
  FailureCountdown fail;  // set before a round's first publish, used by the lane during it
  Completion done(1);
  auto contender = make_contender([&](std::size_t) -> SubHandler {
    return [&](std::string_view) {
      if (fail.now()) return false;
      done.confirm(0);
      return true;
    };
  });
  const std::string payload = make_payload(64);
  const int pairs = 20;
  prime_memory(log_bytes(per_round * 2 * pairs, payload.size()));
  std::vector<double> rate[2], ratio;
  bool ok = true;
  for (auto _ : state) {
    for (int pair = 0; pair < pairs && ok; ++pair) {
      double r[2] = {0, 0};
      for (int failing = 0; failing < 2 && ok; ++failing) {
        // Odd pairs run the failing round first, so neither kind always follows the other.
        const int kind = pair % 2 == 0 ? failing : 1 - failing;
        fail.set(kind == 1 ? 100 : 0);  // before the round's first publish: the lane reads it after
        done.arm(1, per_round);
        const std::int64_t t0 = now_ns();
        for (std::int64_t m = 0; m < per_round; ++m) contender->publish(payload);
        ok = done.wait();
        r[kind] = static_cast<double>(per_round) * 1e9 / static_cast<double>(now_ns() - t0);
      }
      rate[0].push_back(r[0]);
      rate[1].push_back(r[1]);
      ratio.push_back(r[1] / r[0]);
    }
  }
  if (!ok) state.SkipWithError("confirmations missing after 60 s");
  state.counters["none_failing_per_s"] = median(rate[0]);
  state.counters["one_pct_failing_per_s"] = median(rate[1]);
  state.counters["ratio"] = median(ratio);
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
  benchmark::RegisterBenchmark("acks_paired/broker_lane",
                               [n](benchmark::State& s) {
                                 acks_paired(s, n, [](const HandlerFactory& m) {
                                   return std::make_unique<BrokerFanOut>(
                                       1, m, lane(broker::Millis{0}), broker::TopicOptions{}, 0);
                                 });
                               })
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
