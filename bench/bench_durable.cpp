// Scenario 8: durable storage. Publish throughput in memory, with storage and publish_sync
// none, and with publish_sync always from 1 and from 8 publisher threads (group commit);
// eight workers polling and acking under commit_sync always with and without
// durable_attempts (SPEC R34),
// next to the machine's own write + fdatasync rate; then recovery (constructing a Broker on
// a directory of about 1 GiB of segments) next to a plain sequential read of the same
// files. Real files under /tmp through the broker's default (POSIX) file system; every
// directory is made for one benchmark (recovery and sequential_read share theirs) and
// removed after it, also when it is skipped.
#include <benchmark/benchmark.h>
#include <broker/broker.h>
#include <broker/file_system.h>
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "common.h"
#include "main.h"

namespace bench {
namespace {

constexpr std::size_t kPayload = 64;
constexpr std::size_t kRecoveryPayload = 1024;
/// Payload bytes published before recovery is timed (BENCH_SCALE scales it): 1 GiB of 1 KiB
/// payloads, about 1.07 GiB of segments. Preparing it (a million publishes, publish_sync
/// none, then the writeback forced by each segment roll's fdatasync) took 9-16 s here, so
/// the full size fits; the whole suite runs in about 35 s on 2 cores.
constexpr std::int64_t kRecoveryBytes = std::int64_t{1} << 30;
const std::string kTopic = "t";

/// A mapped file of CountingFs: its syncs are counted with the file system's.
class CountingMapped final : public broker::MappedFile {
 public:
  CountingMapped(std::unique_ptr<broker::MappedFile> file, std::atomic<std::int64_t>& syncs)
      : file_(std::move(file)), syncs_(syncs) {}
  [[nodiscard]] std::uint64_t size() const override { return file_->size(); }
  void extend(std::uint64_t size) override { file_->extend(size); }
  void store(std::uint64_t position, std::string_view bytes) override {
    file_->store(position, bytes);
  }
  void sync() override {
    syncs_.fetch_add(1, std::memory_order_relaxed);
    file_->sync();
  }
  void truncate(std::uint64_t size) override { file_->truncate(size); }

 private:
  const std::unique_ptr<broker::MappedFile> file_;
  std::atomic<std::int64_t>& syncs_;
};

/// The broker's real file system, counting sync calls (fdatasync): every call goes to
/// posix_file_system(); a sync costs one relaxed atomic increment more. Used by every
/// publish benchmark with storage, so they stay alike.
class CountingFs final : public broker::FileSystem {
 public:
  void create_directories(const std::string& dir) override { fs_->create_directories(dir); }
  std::vector<std::string> list(const std::string& dir) override { return fs_->list(dir); }
  bool exists(const std::string& path) override { return fs_->exists(path); }
  std::uint64_t size(const std::string& path) override { return fs_->size(path); }
  std::string read(const std::string& path, std::uint64_t position, std::size_t length) override {
    return fs_->read(path, position, length);
  }
  void append(const std::string& path, std::string_view bytes) override {
    fs_->append(path, bytes);
  }
  void sync(const std::string& path) override {
    syncs_.fetch_add(1, std::memory_order_relaxed);
    fs_->sync(path);
  }
  void sync_dir(const std::string& dir) override { fs_->sync_dir(dir); }
  void rename(const std::string& from, const std::string& to) override { fs_->rename(from, to); }
  void remove(const std::string& path) override { fs_->remove(path); }
  void truncate(const std::string& path, std::uint64_t size) override { fs_->truncate(path, size); }
  std::unique_ptr<broker::MappedFile> map(const std::string& path) override {
    return std::make_unique<CountingMapped>(fs_->map(path), syncs_);
  }
  std::unique_ptr<broker::FileLock> try_lock(const std::string& path) override {
    return fs_->try_lock(path);
  }

  [[nodiscard]] std::int64_t syncs() const { return syncs_.load(std::memory_order_relaxed); }

 private:
  const std::shared_ptr<broker::FileSystem> fs_ = broker::posix_file_system();
  std::atomic<std::int64_t> syncs_{0};
};

/// Synchronous broker options with storage in dir (file_system null: posix_file_system()).
broker::BrokerOptions durable(const std::string& dir, broker::FsyncPolicy publish_sync,
                              std::shared_ptr<broker::FileSystem> fs = nullptr) {
  broker::StorageOptions storage;
  storage.directory = dir;
  storage.file_system = std::move(fs);
  storage.publish_sync = publish_sync;
  return broker::BrokerOptions::synchronous().with_storage(storage);
}

/// What a durable publish benchmark runs against.
enum class Store { kInMemory, kNone, kAlways };

/// Rounds of `threads` publisher threads on one broker, each publishing per_thread 64-byte
/// payloads to topic "t" (no subscribers; unbounded retention, so the in-memory broker and
/// the durable ones keep the same messages). Every contender, the 1-thread ones too, starts
/// its publishers as threads released together by a latch, so they differ only in the store.
void publish(benchmark::State& state, Store store, int threads, std::int64_t per_thread) {
  try {
    std::unique_ptr<TempDir> dir;
    std::shared_ptr<CountingFs> fs;
    std::unique_ptr<broker::Broker> b;
    if (store == Store::kInMemory) {
      b = std::make_unique<broker::Broker>();
    } else {
      dir = std::make_unique<TempDir>();
      fs = std::make_shared<CountingFs>();
      b = std::make_unique<broker::Broker>(durable(
          dir->path(),
          store == Store::kAlways ? broker::FsyncPolicy::always() : broker::FsyncPolicy::none(),
          fs));
    }
    b->create_topic(kTopic);
    const std::int64_t syncs0 = fs ? fs->syncs() : 0;  // create_topic synced the journal
    const std::string payload = make_payload(kPayload);
    prime_memory(log_bytes(threads * per_thread * state.max_iterations, kPayload));
    std::int64_t published = 0;
    for (auto _ : state) {
      std::latch start(threads + 1);
      std::mutex error_mu;
      std::string error;
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
          start.arrive_and_wait();
          try {
            for (std::int64_t i = 0; i < per_thread; ++i) b->publish(kTopic, payload);
          } catch (const std::exception& e) {
            const std::lock_guard lock(error_mu);
            error = e.what();
          }
        });
      }
      start.arrive_and_wait();
      for (auto& w : workers) w.join();
      if (!error.empty()) {
        state.SkipWithError(error.c_str());
        break;
      }
      published += threads * per_thread;
    }
    state.SetItemsProcessed(published);
    state.counters["threads"] = threads;
    if (fs && published > 0) {
      // Includes the syncs of segment rolls (a 64 MiB segment holds about 600k records).
      state.counters["syncs_per_publish"] =
          static_cast<double>(fs->syncs() - syncs0) / static_cast<double>(published);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// SPEC R34's cost: `workers` threads each polling up to `batch` messages and acking each,
/// until per_worker messages a round, on one pull subscription under commit_sync always,
/// with or without durable_attempts (a synced commit per poll besides the acks'; the
/// workers' commits share syncs: group commit). The messages are published before the
/// rounds (publish_sync none); an item is a message polled and acked.
void consume(benchmark::State& state, bool durable_attempts, int workers, std::size_t batch,
             std::int64_t per_worker) {
  try {
    TempDir dir;
    auto fs = std::make_shared<CountingFs>();
    broker::Broker b(durable(dir.path(), broker::FsyncPolicy::none(), fs));
    b.create_topic(kTopic);
    broker::PullOptions o;
    o.start = broker::StartPosition::beginning();
    o.ack_timeout = broker::Millis{600000};
    o.max_deliveries = 0;
    o.durable_attempts = durable_attempts;
    b.subscribe_pull(kTopic, "s", o);
    const std::string payload = make_payload(kPayload);
    const std::int64_t total = workers * per_worker * state.max_iterations;
    for (std::int64_t i = 0; i < total; ++i) b.publish(kTopic, payload);
    const std::int64_t syncs0 = fs->syncs();
    std::int64_t consumed = 0;
    for (auto _ : state) {
      std::latch start(workers + 1);
      std::mutex error_mu;
      std::string error;
      std::vector<std::thread> threads;
      for (int w = 0; w < workers; ++w) {
        threads.emplace_back([&, w] {
          const std::string member = "w" + std::to_string(w);
          start.arrive_and_wait();
          try {
            for (std::int64_t i = 0; i < per_worker;) {
              for (const broker::Received& r : b.poll(kTopic, "s", member, batch)) {
                if (!b.ack(r.receipt)) throw std::runtime_error("ack refused");
                ++i;
              }
            }
          } catch (const std::exception& e) {
            const std::lock_guard lock(error_mu);
            error = e.what();
          }
        });
      }
      start.arrive_and_wait();
      for (auto& t : threads) t.join();
      if (!error.empty()) {
        state.SkipWithError(error.c_str());
        break;
      }
      consumed += workers * per_worker;
    }
    state.SetItemsProcessed(consumed);
    state.counters["threads"] = workers;
    if (consumed > 0) {
      state.counters["syncs_per_message"] =
          static_cast<double>(fs->syncs() - syncs0) / static_cast<double>(consumed);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// The machine's own limit under publish_sync always: appends 64 bytes to a file and
/// fdatasyncs it, n times a round (O_APPEND, so the file grows like a segment does).
void raw_fdatasync(benchmark::State& state, std::int64_t n) {
  try {
    const TempDir dir;
    const std::string path = dir.path() + "/raw";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(sys_error("open " + path, errno));
    const std::string payload = make_payload(kPayload);
    std::int64_t done = 0;
    std::string error;
    for (auto _ : state) {
      for (std::int64_t i = 0; i < n && error.empty(); ++i) {
        if (::write(fd, payload.data(), payload.size()) != static_cast<ssize_t>(payload.size())) {
          error = sys_error("write", errno);
        } else if (::fdatasync(fd) != 0) {
          error = sys_error("fdatasync", errno);
        }
      }
      if (!error.empty()) {
        state.SkipWithError(error.c_str());
        break;
      }
      done += n;
    }
    ::close(fd);
    state.SetItemsProcessed(done);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// A storage directory (a TempDir) holding about `payload_bytes` of 1 KiB payloads in one topic
/// (publish_sync none, default 64 MiB segments, unbounded retention), closed cleanly.
struct Prepared {
  TempDir dir;
  std::string store;              // the broker's directory inside dir
  std::vector<std::string> segs;  // the segment files, sorted
  std::uint64_t seg_bytes = 0;    // their total size
  std::int64_t messages = 0;
  double seconds = 0;  // preparation time
};

std::unique_ptr<Prepared> prepare(std::int64_t payload_bytes) {
  auto p = std::make_unique<Prepared>();
  p->store = p->dir.path() + "/store";
  p->messages = payload_bytes / static_cast<std::int64_t>(kRecoveryPayload);
  const std::int64_t t0 = now_ns();
  {
    broker::Broker b(durable(p->store, broker::FsyncPolicy::none()));
    b.create_topic(kTopic);
    const std::string payload = make_payload(kRecoveryPayload);
    for (std::int64_t i = 0; i < p->messages; ++i) b.publish(kTopic, payload);
  }  // the clean close syncs the active segment; each roll synced the one before
  p->seconds = static_cast<double>(now_ns() - t0) * 1e-9;
  for (const auto& e : std::filesystem::recursive_directory_iterator(p->store)) {
    if (e.is_regular_file() && e.path().extension() == ".seg") {
      p->segs.push_back(e.path().string());
      p->seg_bytes += e.file_size();
    }
  }
  std::sort(p->segs.begin(), p->segs.end());
  malloc_trim(0);  // hand the writer broker's messages back before anything is measured
  return p;
}

void report_prepared(benchmark::State& state, const Prepared& p) {
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(p.seg_bytes));
  state.SetLabel(std::to_string(p.seg_bytes >> 20) + " MiB in " + std::to_string(p.segs.size()) +
                 " segments, 1 KiB payloads");
  state.counters["segment_mb"] = static_cast<double>(p.seg_bytes) / 1e6;
  state.counters["prepare_s"] = p.seconds;
}

// Recovery and sequential_read read the same directory, prepared once by whichever of the
// two runs first (the preparation takes most of this suite's time) and removed once
// sequential_read (registered last) is done, or at exit if it does not run. Nothing is
// dropped from the page cache: the segments were just written, so both read them warm, the
// one right after the other; the pair compares recovery's own work (copies, checksums,
// offsets, the index) with the cost of getting the bytes at all.
std::unique_ptr<Prepared>& shared_prepared() {
  static std::unique_ptr<Prepared> p;
  return p;
}

const Prepared& prepared(std::int64_t payload_bytes) {
  std::unique_ptr<Prepared>& p = shared_prepared();
  if (!p) p = prepare(payload_bytes);
  return *p;
}

/// Times constructing a Broker on the prepared directory: recovery reads every segment back
/// (two threads, a file each) and checks every record's checksums and offset. Recovered
/// messages stay on disk behind a sparse index, so the broker's memory grows by the index
/// and a size per message (the rss_growth_mb counter), not by the payloads. Destruction is
/// outside the timing.
void recovery(benchmark::State& state, std::int64_t payload_bytes) {
  try {
    const Prepared* p = &prepared(payload_bytes);
    std::uint64_t recovered = 0;
    std::int64_t rss_growth = 0;
    for (auto _ : state) {
      const std::int64_t rss0 = rss_bytes();
      const std::int64_t t0 = now_ns();
      auto b = std::make_unique<broker::Broker>(durable(p->store, broker::FsyncPolicy::none()));
      state.SetIterationTime(static_cast<double>(now_ns() - t0) * 1e-9);
      recovered = b->recovery().messages;
      rss_growth = std::max(rss_growth, rss_bytes() - rss0);
      b.reset();
      malloc_trim(0);
    }
    if (static_cast<std::int64_t>(recovered) != p->messages) {
      state.SkipWithError("recovery did not read back every message");
      return;
    }
    report_prepared(state, *p);
    state.counters["recovered_messages"] = static_cast<double>(recovered);
    state.counters["rss_growth_mb"] = static_cast<double>(rss_growth) / 1e6;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// Reads every segment file of the prepared directory with read(2) in 1 MiB chunks.
void sequential_read(benchmark::State& state, std::int64_t payload_bytes) {
  struct Release {
    ~Release() { shared_prepared().reset(); }
  } release;  // also when skipped
  try {
    const Prepared* p = &prepared(payload_bytes);
    std::vector<char> buf(1u << 20);
    std::uint64_t got = 0;
    std::string error;
    for (auto _ : state) {
      const std::int64_t t0 = now_ns();
      got = 0;
      for (const std::string& path : p->segs) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          error = sys_error("open " + path, errno);
          break;
        }
        for (;;) {
          const ssize_t n = ::read(fd, buf.data(), buf.size());
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) {
            error = sys_error("read " + path, errno);
          }
          if (n <= 0) break;
          benchmark::DoNotOptimize(buf.data());
          got += static_cast<std::uint64_t>(n);
        }
        ::close(fd);
        if (!error.empty()) break;
      }
      state.SetIterationTime(static_cast<double>(now_ns() - t0) * 1e-9);
      if (!error.empty()) {
        state.SkipWithError(error.c_str());
        return;
      }
    }
    if (got != p->seg_bytes) {
      state.SkipWithError("read fewer bytes than the segments hold");
      return;
    }
    report_prepared(state, *p);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_all() {
  using Run = std::function<void(benchmark::State&)>;
  const std::int64_t fast = scaled(500'000, 1'000);  // per round, in memory and none
  // publish_sync always: 1,000 to 4,000 fdatasync/s on this machine's disk (it drifts).
  const std::int64_t slow = scaled(2'000, 50);   // per round, 1 thread and raw
  const std::int64_t slow8 = scaled(1'000, 20);  // per thread per round, 8 threads
  const std::int64_t bytes = scaled(kRecoveryBytes, 4 << 20);
  // The fdatasync-bound ones first and side by side: the disk's sync rate drifts by 2x
  // from one second to the next here, and the bulk writes (and removals: the file system
  // is mounted with discard) of the others would slow the syncs that follow them.
  const std::vector<std::pair<std::string, Run>> publishers = {
      {"raw_fdatasync", [slow](benchmark::State& s) { raw_fdatasync(s, slow); }},
      {"publish_always_1_thread",
       [slow](benchmark::State& s) { publish(s, Store::kAlways, 1, slow); }},
      // Each publisher waits for a sync that began after its write, so with 8 closed-loop
      // publishers a sync covers about half of them (the others wrote during it): expect
      // syncs_per_publish near 1/4, and about 4x the 1-thread rate on a steady disk.
      {"publish_always_8_threads",
       [slow8](benchmark::State& s) { publish(s, Store::kAlways, 8, slow8); }},
      // R34: eight workers polling (one message, or up to four) and acking under commit_sync
      // always, with and without durable_attempts, side by side like the publishers (the
      // disk's sync rate drifts).
      {"consume_8_workers", [slow8](benchmark::State& s) { consume(s, false, 8, 1, slow8 / 2); }},
      {"consume_8_workers_durable_attempts",
       [slow8](benchmark::State& s) { consume(s, true, 8, 1, slow8 / 2); }},
      {"consume_8_workers_batch_4",
       [slow8](benchmark::State& s) { consume(s, false, 8, 4, slow8); }},
      {"consume_8_workers_batch_4_durable_attempts",
       [slow8](benchmark::State& s) { consume(s, true, 8, 4, slow8); }},
      {"publish_in_memory", [fast](benchmark::State& s) { publish(s, Store::kInMemory, 1, fast); }},
      {"publish_none", [fast](benchmark::State& s) { publish(s, Store::kNone, 1, fast); }},
  };
  for (const auto& [name, run] : publishers) {
    benchmark::RegisterBenchmark(("durable/" + name).c_str(), run)
        ->Iterations(3)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  const std::vector<std::pair<std::string, Run>> readers = {
      {"recovery", [bytes](benchmark::State& s) { recovery(s, bytes); }},
      {"sequential_read", [bytes](benchmark::State& s) { sequential_read(s, bytes); }},
  };
  for (const auto& [name, run] : readers) {
    benchmark::RegisterBenchmark(("durable/" + name).c_str(), run)
        ->Iterations(3)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
