// Issue 15: pull workers on a partitioned topic (SPEC R29), one worker thread per partition,
// against one partition and one worker; and order per key (R31) against no order, with two
// or four workers sharing one subscription of 1,000 keys. Every message is acked; the clock stops
// when the last ack returns (manual time, publishing excluded). And how soon a waiting
// poll_wait gets a message made ready by a hand-back or a freed place, against one made ready
// by a publish (R11).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "common.h"
#include "main.h"

namespace bench {
namespace {

broker::PullOptions from_beginning(bool ordered) {
  broker::PullOptions o;
  o.start = broker::StartPosition::beginning();
  o.ack_timeout = broker::Millis{600'000};
  o.ordered_by_key = ordered;
  return o;
}

// Workers poll (up to 100) and ack until each topic's `per_topic` messages are acked; a
// worker stops when its topic is done (one that went on polling an empty topic would take a
// core from those still working whenever workers outnumber cores). Returns the seconds.
double drain(broker::Broker& b, const std::vector<std::string>& topics, int workers_per_topic,
             std::int64_t per_topic) {
  std::vector<std::atomic<std::int64_t>> acked(topics.size());
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < topics.size(); ++t) {
    for (int w = 0; w < workers_per_topic; ++w) {
      workers.emplace_back([&, t, w] {
        std::string me = "w";  // (not "w" + ...: GCC 12's -Wrestrict misfires on it at -O2)
        me += std::to_string(w);
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (acked[t].load(std::memory_order_relaxed) < per_topic &&
               std::chrono::steady_clock::now() < give_up) {
          const std::vector<broker::Received> got = b.poll(topics[t], "s", me, 100);
          for (const broker::Received& r : got) b.ack(r.receipt);
          // Counted once per batch: a shared counter bumped per message would be the one
          // cache line every worker writes, and the benchmark would measure it.
          if (!got.empty()) {
            acked[t].fetch_add(static_cast<std::int64_t>(got.size()), std::memory_order_relaxed);
          } else {
            // A busy-polling client gives its core away when there was nothing: more workers
            // than cores would otherwise spin on the subscription's lock while the worker
            // holding what they wait for (R31: a key's message) waits for a core.
            std::this_thread::yield();
          }
        }
      });
    }
  }
  for (auto& w : workers) w.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `partitions` partitions, one worker each (1: a plain topic).
void partitioned(benchmark::State& state) {
  const auto partitions = static_cast<std::uint32_t>(state.range(0));
  const std::int64_t n = scaled(200'000, 1'000);
  const std::string payload = make_payload(64);
  for (auto _ : state) {
    broker::Broker b;
    broker::TopicOptions o;
    o.partitions = partitions;
    b.create_topic("t", o);
    std::vector<std::string> topics;
    for (std::uint32_t p = 0; p < partitions; ++p) {
      topics.push_back(partitions == 1 ? "t" : broker::partition_name("t", p));
      b.subscribe_pull(topics.back(), "s", from_beginning(false));
    }
    for (std::int64_t i = 0; i < n; ++i) b.publish("t", payload);  // keyless: round robin
    state.SetIterationTime(drain(b, topics, 1, n / partitions));
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// One subscription, 2 or 4 workers, 1,000 keys; ordered (R31) or not.
void ordered(benchmark::State& state) {
  const bool by_key = state.range(0) == 1;
  const int workers = static_cast<int>(state.range(1));
  const std::int64_t n = scaled(100'000, 1'000);
  const std::string payload = make_payload(64);
  for (auto _ : state) {
    broker::Broker b;
    b.create_topic("t");
    b.subscribe_pull("t", "s", from_beginning(by_key));
    for (std::int64_t i = 0; i < n; ++i) {
      std::string key = "k";
      key += std::to_string(i % 1000);
      b.publish("t", payload, {}, std::move(key));
    }
    state.SetIterationTime(drain(b, {"t"}, workers, n));
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// R11: a worker waits in poll_wait while another makes a message ready, 300 us into the wait
// (so the waiter sleeps): by a publish (0), by nacking the one message it holds (1), or by
// acking it under max_in_flight = 1 while the next one waits for the place (2). Per round, the
// time from just before that call to the poll_wait's return; the median of 200 rounds.
void wake(benchmark::State& state) {
  const int how = static_cast<int>(state.range(0));
  const int rounds = static_cast<int>(scaled(200, 20));
  const std::string payload = make_payload(64);
  std::vector<double> us;
  for (auto _ : state) {
    broker::Broker b;
    b.create_topic("t");
    broker::PullOptions o = from_beginning(false);
    if (how == 2) o.max_in_flight = 1;
    b.subscribe_pull("t", "s", o);
    for (int round = 0; round < rounds; ++round) {
      std::vector<broker::Received> held;
      if (how != 0) {
        b.publish("t", payload);
        if (how == 2) b.publish("t", payload);
        held = b.poll("t", "s", "holder", 1);
      }
      std::atomic<std::int64_t> made_ready{0};
      std::int64_t woke = 0;
      std::thread waiter([&] {
        const std::vector<broker::Received> got =
            b.poll_wait("t", "s", "waiter", 1, broker::Millis{2000});
        woke = now_ns();
        for (const broker::Received& r : got) b.ack(r.receipt);
      });
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      made_ready.store(now_ns());
      if (how == 0) b.publish("t", payload);
      if (how == 1) b.nack(held.at(0).receipt);
      if (how == 2) b.ack(held.at(0).receipt);
      waiter.join();
      us.push_back(static_cast<double>(woke - made_ready.load()) / 1e3);
    }
  }
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["max_us"] = us.back();
}

void register_all() {
  benchmark::RegisterBenchmark("partitions/broker_pull", partitioned)
      ->Arg(1)
      ->Arg(2)
      ->Arg(4)
      ->ArgName("partitions")
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(3);
  // 1 worker: the index alone; 2: as many as this machine's cores; 4: more workers than cores, so a
  // worker is often descheduled with keys in hand (what order per key then costs, BENCHMARKS.md).
  benchmark::RegisterBenchmark("ordering/broker_pull", ordered)
      ->ArgsProduct({{0, 1}, {1, 2, 4}})
      ->ArgNames({"ordered", "workers"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(10);  // runs of 40-100 ms: ten, so one descheduled worker moves less
  benchmark::RegisterBenchmark("wake/broker_poll_wait", wake)
      ->Arg(0)
      ->Arg(1)
      ->Arg(2)
      ->ArgName("ready_by")
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
