// Shared helpers of the benchmark suites: clocks, completion counting, log-bucket latency
// histograms, process memory and CPU probes, and workload scaling.
#pragma once

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace bench {

/// What every contender calls per delivered message. Returns true to confirm; false asks for
/// the message again (at-least-once). Called from the contender's delivery threads.
using SubHandler = std::function<bool(std::string_view payload)>;
/// Makes the handler of subscriber i (called once per subscriber at construction).
using HandlerFactory = std::function<SubHandler(std::size_t index)>;

/// Steady-clock nanoseconds; the time base of every latency figure.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Workload multiplier from BENCH_SCALE (default 1): tiny values for development runs.
inline double scale() {
  static const double s = [] {
    const char* v = std::getenv("BENCH_SCALE");
    return v != nullptr ? std::max(1e-4, std::atof(v)) : 1.0;
  }();
  return s;
}

/// n scaled by BENCH_SCALE, at least lo.
inline std::int64_t scaled(std::int64_t n, std::int64_t lo = 1) {
  return std::max<std::int64_t>(lo, static_cast<std::int64_t>(static_cast<double>(n) * scale()));
}

/// A payload of size bytes (at least 8): the first 8 bytes carry a stamp (an intended send
/// time or a sequence number), the rest is filler.
inline std::string make_payload(std::size_t size, std::int64_t stamp = 0) {
  std::string p(std::max<std::size_t>(size, 8), 'x');
  std::memcpy(p.data(), &stamp, sizeof stamp);
  return p;
}

/// The stamp written by make_payload.
inline std::int64_t read_stamp(std::string_view payload) {
  std::int64_t stamp = 0;
  std::memcpy(&stamp, payload.data(), sizeof stamp);
  return stamp;
}

/// The median of v (the upper one of an even count), 0 if v is empty: what the paired
/// comparisons report of their turns.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Counts confirmed deliveries per subscriber and wakes the benchmark thread when every
/// awaited subscriber has reached its target. Thread-safe; each subscriber's counter is
/// written by one delivery at a time (the contenders keep per-subscriber order).
class Completion {
 public:
  explicit Completion(std::size_t subscribers) : counts_(subscribers) {}

  /// Starts a round: each of the first `awaited` subscribers must confirm `per_sub` more.
  void arm(std::size_t awaited, std::int64_t per_sub) {
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      counts_[i].target.store(
          i < awaited ? counts_[i].n.load(std::memory_order_relaxed) + per_sub : -1,
          std::memory_order_relaxed);
    }
    remaining_.store(static_cast<std::int64_t>(awaited), std::memory_order_release);
  }

  /// One confirmed delivery to subscriber i.
  void confirm(std::size_t i) {
    Slot& s = counts_[i];
    const std::int64_t n = s.n.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n == s.target.load(std::memory_order_relaxed)) {
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_all();
    }
  }

  /// Waits until the round is complete or timeout_s passed; returns whether it completed.
  bool wait(double timeout_s = 60.0) {
    const std::int64_t deadline = now_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
    for (;;) {
      const std::int64_t r = remaining_.load(std::memory_order_acquire);
      if (r == 0) return true;
      if (now_ns() > deadline) return false;
      // Short sleeps rather than atomic::wait: a timeout must be possible.
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  /// Total confirmations to subscriber i so far.
  [[nodiscard]] std::int64_t count(std::size_t i) const {
    return counts_[i].n.load(std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Slot {
    std::atomic<std::int64_t> n{0};
    std::atomic<std::int64_t> target{-1};
  };
  std::vector<Slot> counts_;
  std::atomic<std::int64_t> remaining_{0};
};

/// HdrHistogram-style latency histogram: 64 linear sub-buckets per power of two (about
/// 1.6% relative precision) from 1 ns to about 500 s. Single writer; merge() to combine.
class Histogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kMagnitudes = 34;

  /// Records one value in nanoseconds (negative values count as 0).
  void record(std::int64_t ns) {
    const auto v = static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0));
    ++buckets_[index(v)];
    ++total_;
    max_ = std::max(max_, v);
  }

  /// Adds other's counts to this one.
  void merge(const Histogram& other) {
    for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
    total_ += other.total_;
    max_ = std::max(max_, other.max_);
  }

  /// The value at quantile q in [0, 1], in nanoseconds (the bucket's upper edge).
  [[nodiscard]] double quantile(double q) const {
    if (total_ == 0) return 0;
    const auto want = static_cast<std::uint64_t>(q * static_cast<double>(total_ - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      seen += buckets_[i];
      if (seen >= want) return static_cast<double>(std::min(upper(i), max_));
    }
    return static_cast<double>(max_);
  }

  /// Number of recorded values.
  [[nodiscard]] std::uint64_t count() const { return total_; }
  /// Largest recorded value in nanoseconds.
  [[nodiscard]] double max() const { return static_cast<double>(max_); }

 private:
  // Row 0 holds 0..63 exactly; row r >= 1 holds [64 << (r-1), 64 << r) in 64 equal steps.
  static std::size_t index(std::uint64_t v) {
    if (v < kSub) return static_cast<std::size_t>(v);
    const int shift = std::bit_width(v) - kSubBits - 1;  // >= 0
    const auto sub = static_cast<std::size_t>((v >> shift) - kSub);
    return std::min<std::size_t>(static_cast<std::size_t>(shift + 1) * kSub + sub,
                                 kMagnitudes * kSub - 1);
  }
  static std::uint64_t upper(std::size_t i) {
    if (i < kSub) return i;
    const std::size_t shift = i / kSub - 1;
    const std::uint64_t sub = i % kSub + kSub;
    return ((sub + 1) << shift) - 1;
  }

  std::array<std::uint64_t, kMagnitudes * kSub> buckets_{};
  std::uint64_t total_ = 0;
  std::uint64_t max_ = 0;
};

/// Touches `bytes` of fresh memory (2 MiB pages where the system allows, as the broker's
/// log segments) and gives it back, right before a timed loop that will grow by about that
/// much. Why: on a VM whose free pages go back to the host (virtio-balloon free page
/// reporting: this one reports every free 2 MiB block at once), the first touch of a page
/// makes the host back it, at 75-120 MB/s here against 8-10 GB/s for a page the guest
/// had already (measured by touching 256 MiB twice); a contender that grows (the broker's
/// log keeps every message) would measure the host's page provisioning, not its own work,
/// while one that reuses its memory (the baselines' queues) would not. Pages given back are
/// reused before the host gets them (it is told after about two seconds), so the timed
/// loop finds them backed, as on a machine without a balloon. Every contender is primed
/// the same way. At least 16 MiB: a region smaller than a 2 MiB page primes only small
/// pages, and the log's next 2 MiB segment then met an unbacked one (3.5 ms for its first
/// touch here; traced as the broker's 3-4 ms latency events at 10k/s).
inline void prime_memory(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  bytes = std::max(bytes, std::size_t{16} << 20);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // nothing primed: the figures include the provisioning
  (void)madvise(p, bytes, MADV_HUGEPAGE);
  auto* bytes_p = static_cast<volatile unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; i += kPage) bytes_p[i] = 1;
  munmap(p, bytes);
}

/// About what the broker's log grows by for `messages` payloads of `payload` bytes (the
/// record header, index and segment slack), for prime_memory.
inline std::size_t log_bytes(std::int64_t messages, std::size_t payload) {
  return static_cast<std::size_t>(messages) * (payload + 64) * 5 / 4;
}

/// Resident set size of this process in bytes (VmRSS).
inline std::int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

/// Peak resident set size of this process in bytes (VmHWM).
inline std::int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::int64_t>(u.ru_maxrss) * 1024;
}

/// What the kernel did to this process so far: page faults (minor and major) and
/// involuntary context switches (a thread taken off its CPU while it could run), summed
/// over all its threads.
struct ProcessEvents {
  std::int64_t faults = 0;
  std::int64_t preempted = 0;
};
inline ProcessEvents process_events() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {static_cast<std::int64_t>(u.ru_minflt + u.ru_majflt),
          static_cast<std::int64_t>(u.ru_nivcsw)};
}

/// Bytes the allocator has handed out and not got back (glibc mallinfo2, all arenas).
inline std::int64_t heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<std::int64_t>(mi.uordblks + mi.hblkhd);
}

/// CPU time (user + system) this process has used, in seconds.
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// The CPUs this process may run on, in order (sched_getaffinity of the calling thread).
inline std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

/// Binds the calling thread to one CPU; returns whether the kernel accepted it.
inline bool pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/// Binds the calling thread to one CPU for its lifetime and restores the thread's previous
/// CPU set after (the benchmark thread runs every other benchmark too). No-op for cpu < 0.
class ScopedPin {
 public:
  explicit ScopedPin(int cpu) {
    CPU_ZERO(&saved_);
    if (cpu >= 0 && pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0) {
      pinned_ = pin_this_thread(cpu);
    }
  }
  ~ScopedPin() {
    if (pinned_) (void)pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  ScopedPin(const ScopedPin&) = delete;
  ScopedPin& operator=(const ScopedPin&) = delete;
  /// Whether the thread is bound.
  [[nodiscard]] bool pinned() const { return pinned_; }

 private:
  cpu_set_t saved_;
  bool pinned_ = false;
};

/// Where a run with one subscriber puts its two busy threads: the publisher (the benchmark
/// thread) on the first CPU this process may use, each delivering thread on the second, for
/// every contender alike, so the kernel never puts both on one CPU or moves one mid-run.
/// Nothing is bound where fewer than two CPUs are allowed; a handler called on the
/// publisher's own thread (a synchronous contender) leaves it where it is.
class TwoCpuPlacement {
 public:
  TwoCpuPlacement() : cpus_(allowed_cpus()), publisher_(std::this_thread::get_id()) {}

  /// Binds the calling (publisher) thread until this object is destroyed. Call it after the
  /// contender started its threads, so they do not inherit the binding.
  void bind_publisher() {
    if (cpus_.size() >= 2) publisher_pin_.emplace(cpus_[0]);
  }
  /// From a handler: binds the delivering thread calling it, on its first call.
  void on_delivery() const {
    thread_local const TwoCpuPlacement* bound_for = nullptr;
    if (cpus_.size() < 2 || bound_for == this || std::this_thread::get_id() == publisher_) return;
    (void)pin_this_thread(cpus_[1]);
    bound_for = this;
  }
  /// Whether threads are bound (two CPUs or more).
  [[nodiscard]] bool active() const { return cpus_.size() >= 2; }

 private:
  const std::vector<int> cpus_;
  const std::thread::id publisher_;
  std::optional<ScopedPin> publisher_pin_;
};

/// Nanoseconds every CPU of this machine spent stolen by the hypervisor since boot (the
/// `steal` column of /proc/stat's "cpu" line; 0 where the kernel does not count it). The
/// difference across a timed loop says how long the host ran something else instead.
inline std::int64_t steal_ns() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  std::int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
               steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  if (cpu != "cpu") return 0;
  return steal * (1'000'000'000 / sysconf(_SC_CLK_TCK));
}

/// Nanoseconds the calling thread has spent runnable but waiting for a CPU (the second field
/// of /proc/thread-self/schedstat; 0 where the kernel does not keep it): how long other
/// tasks (kernel threads, the other threads of this process) held its CPU.
inline std::int64_t runqueue_wait_ns() {
  std::ifstream stat("/proc/thread-self/schedstat");
  std::int64_t ran = 0, waited = 0;
  stat >> ran >> waited;
  return waited;
}

/// Waits until t (steady ns): sleeps while far away, then yields, so a paced publisher
/// does not starve the subscribers it shares two cores with.
inline void wait_until_ns(std::int64_t t) {
  for (;;) {
    const std::int64_t left = t - now_ns();
    if (left <= 0) return;
    if (left > 200'000) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(left - 150'000));
    } else {
      std::this_thread::yield();
    }
  }
}

/// "what: <the system's message for err>" (appended, not `"literal" + std::string`: GCC 12
/// warns about that with -Wrestrict).
inline std::string sys_error(std::string what, int err) {
  what += ": ";
  what += std::error_code(err, std::generic_category()).message();
  return what;
}

/// A fresh directory under /tmp, removed with everything in it by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string templ = "/tmp/bench_durable_XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      throw std::runtime_error(sys_error("mkdtemp " + templ, errno));
    }
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace bench
