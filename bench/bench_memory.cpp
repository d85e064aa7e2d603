// Scenario 5: memory. Bytes per retained message beyond the payload with lagging
// subscriptions (the larger of the heap delta from glibc mallinfo2, so allocator overhead
// counts, and the RSS delta, so memory mapped outside the heap counts too: the broker maps
// its 2 MiB segments), and the peak RSS growth while publishing far past a retention bound.
#include <benchmark/benchmark.h>

#include <algorithm>
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

constexpr std::size_t kPayload = 64;

/// Publishes n messages that `subs` lagging subscribers never consume; reports heap and
/// RSS per message, and the largest RSS growth sampled along the way.
template <class Make>
void retained(benchmark::State& state, Make make_contender) {
  const auto subs = static_cast<std::size_t>(state.range(0));
  const std::int64_t n = scaled(state.range(1), 1000);
  for (auto _ : state) {
    std::latch release(1);
    malloc_trim(0);
    const std::int64_t heap0 = heap_in_use();
    const std::int64_t rss0 = rss_bytes();
    std::int64_t peak = 0;
    {
      auto contender = make_contender(subs, [&](std::size_t) -> SubHandler {
        return [&](std::string_view) {
          release.wait();  // lagging: holds its first message until the end
          return true;
        };
      });
      const std::string payload = make_payload(kPayload);
      for (std::int64_t i = 0; i < n; ++i) {
        contender->publish(payload);
        if ((i & 0xFFFF) == 0) peak = std::max(peak, rss_bytes() - rss0);
      }
      const std::int64_t heap = heap_in_use() - heap0;
      peak = std::max(peak, rss_bytes() - rss0);
      const std::int64_t rss = rss_bytes() - rss0;
      const auto per = static_cast<double>(std::max(heap, rss)) / static_cast<double>(n);
      state.counters["heap_bytes_per_msg"] = static_cast<double>(heap) / static_cast<double>(n);
      state.counters["rss_bytes_per_msg"] = static_cast<double>(rss) / static_cast<double>(n);
      state.counters["bytes_per_msg"] = per;
      state.counters["beyond_payload_bytes_per_msg"] = per - static_cast<double>(kPayload);
      state.counters["peak_rss_growth_mb"] = static_cast<double>(peak) / 1e6;
      state.counters["messages"] = static_cast<double>(n);
      release.count_down();
    }
  }
}

/// Our broker: lagging pull subscriptions that never poll (no thread, no handler).
std::unique_ptr<broker::Broker> make_broker(std::size_t subs, std::size_t bound) {
  auto b = std::make_unique<broker::Broker>(lane());
  broker::TopicOptions topic;
  topic.retention_messages = bound;
  b->create_topic("t", topic);
  for (std::size_t i = 0; i < subs; ++i) {
    std::string name = std::to_string(i);
    name.insert(name.begin(), 'p');
    b->subscribe_pull("t", name, broker::PullOptions{});
  }
  return b;
}

/// Adapts a Broker with pull subscriptions to the contenders' publish interface.
struct BrokerPull {
  std::unique_ptr<broker::Broker> b;
  void publish(std::string_view p) { b->publish("t", p); }
};

void register_all() {
  using Run = std::function<void(benchmark::State&)>;
  const std::vector<std::tuple<std::string, std::vector<std::vector<std::int64_t>>, Run>> all = {
      {"memory/broker",
       {{1, 10'000'000}, {1, 1'000'000}, {4, 1'000'000}},
       [](benchmark::State& s) {
         retained(s, [](std::size_t subs, const HandlerFactory&) {
           return std::make_unique<BrokerPull>(BrokerPull{make_broker(subs, 0)});
         });
       }},
      {"memory/good",
       {{1, 1'000'000}, {4, 1'000'000}},
       [](benchmark::State& s) {
         retained(s, [](std::size_t subs, const HandlerFactory& m) {
           return std::make_unique<GoodFanOut>(subs, m);
         });
       }},
      {"memory/zmq",
       {{1, 1'000'000}, {4, 1'000'000}},
       [](benchmark::State& s) {
         retained(s, [](std::size_t subs, const HandlerFactory& m) {
           return std::make_unique<ZmqFanOut>(subs, m);
         });
       }},
      // A bound of 100,000 messages, 2,000,000 published: memory must stay flat.
      {"memory_bound/broker",
       {{1, 2'000'000}},
       [](benchmark::State& s) {
         retained(s, [](std::size_t subs, const HandlerFactory&) {
           return std::make_unique<BrokerPull>(BrokerPull{make_broker(subs, 100'000)});
         });
       }},
      {"memory_bound/good",
       {{1, 2'000'000}},
       [](benchmark::State& s) {
         retained(s, [](std::size_t subs, const HandlerFactory& m) {
           return std::make_unique<GoodFanOut>(subs, m, 100'000);
         });
       }},
  };
  for (const auto& [name, args, run] : all) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), run);
    b->ArgNames({"subs", "msgs"})->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
    for (const auto& a : args) b->Args(a);
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
