// Small helpers shared by the broker's test suites. Header-only, test code only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "broker/broker.h"

namespace broker {

inline std::ostream& operator<<(std::ostream& os, ErrorCode c) { return os << to_string(c); }

inline std::ostream& operator<<(std::ostream& os, Time t) {
  return os << "t=" << t.time_since_epoch().count() << "ms";
}

}  // namespace broker

namespace broker::testing {

/// A fresh directory under the temp dir (named prefix-XXXXXX), removed with everything in
/// it at the end of the scope, also when a test fails.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "broker-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string str() const { return path_.string(); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The code of the broker::Error that `call` throws; fails the test if it throws none.
template <class Call>
ErrorCode code_of(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no broker::Error thrown";
  return ErrorCode::kIoError;
}

/// Options of a synchronous broker that keeps its state in `dir` (SPEC R18-R20): open one,
/// drop it, open another on the same directory to restart.
inline BrokerOptions durable_in(const TempDir& dir) {
  StorageOptions storage;
  storage.directory = dir.str();
  return BrokerOptions::synchronous().with_storage(storage);
}

/// Options of a synchronous broker on a ManualClock at time 0, for a test that passes its
/// own times to poll, ack, expire and the rest (a real clock refuses them, SPEC R11).
inline BrokerOptions on_manual_clock() {
  return BrokerOptions::synchronous().with_clock(std::make_shared<ManualClock>());
}

/// Guards against a hang: only a broken broker ever gets near it. Never an assertion on
/// speed; a passing run returns as soon as the condition holds.
inline constexpr std::chrono::seconds kHangGuard{60};

/// A gate that handlers block on until the test opens it. Opening twice is fine.
class Gate {
 public:
  void open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

/// Opens a gate when the scope ends, so a failed assertion cannot leave a handler blocked
/// and hang the broker's destructor. Declare it after the Broker.
class OpenOnExit {
 public:
  explicit OpenOnExit(Gate& gate) : gate_(gate) {}
  ~OpenOnExit() { gate_.open(); }
  OpenOnExit(const OpenOnExit&) = delete;
  OpenOnExit& operator=(const OpenOnExit&) = delete;

 private:
  Gate& gate_;
};

/// Spins (politely) until pred() holds; false only if kHangGuard passed first.
inline bool WaitUntil(const std::function<bool()>& pred) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > give_up) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// The seed of a real-thread stress test: STRESS_SEED if set (to replay a failure), else
/// the clock. Tests print it with SCOPED_TRACE.
inline std::uint64_t StressSeed() {
  if (const char* s = std::getenv("STRESS_SEED")) return std::strtoull(s, nullptr, 10);
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

/// The iterations of a real-thread stress test: `base` x BROKER_BUDGET (1 in scripts/test,
/// so the tsan stage, 10 in scripts/verify, 0.2 in the asan stage), at least 1, unless
/// STRESS_ITERATIONS=N says exactly N (with STRESS_SEED, STRESS_ITERATIONS=1 replays one
/// failing iteration).
inline int StressIterations(int base) {
  if (const char* s = std::getenv("STRESS_ITERATIONS")) return std::max(1, std::atoi(s));
  double budget = 1;
  if (const char* b = std::getenv("BROKER_BUDGET")) budget = std::atof(b);
  return std::max(1, static_cast<int>(std::lround(base * budget)));
}

/// This test binary's path, for the replay line (Linux; the bare name elsewhere).
inline std::string StressBinary() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("<test binary>") : exe.string();
}

/// Runs a stress test's `body(seed)` StressIterations(base_iterations) times, each with its
/// own seed (StressSeed(), then +1 per iteration), and stops after the first iteration that
/// failed, naming its seed and the command that replays just it. Ends with one summary
/// line, "stress: Suite.Test ran N iterations (seeds A..B)", on stdout and, when
/// STRESS_SUMMARY names a file, appended to it (scripts/test and scripts/verify sum them).
template <typename Body>
void StressLoop(int base_iterations, Body body) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = std::string(info->test_suite_name()) + "." + info->name();
  const int n = StressIterations(base_iterations);
  const std::uint64_t first = StressSeed();
  auto replay = [&](std::uint64_t seed) {
    return "STRESS_SEED=" + std::to_string(seed) + " STRESS_ITERATIONS=1 " + StressBinary() +
           " --gtest_filter='" + name + "'";
  };
  int ran = 0;
  std::string failed;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t seed = first + static_cast<std::uint64_t>(i);
    {
      SCOPED_TRACE("stress iteration " + std::to_string(i + 1) + " of " + std::to_string(n) +
                   ", seed " + std::to_string(seed) + "; replay: " + replay(seed));
      body(seed);
    }
    ++ran;
    if (::testing::Test::HasFailure()) {
      failed = ": FAILED at iteration " + std::to_string(i + 1) + ", seed " + std::to_string(seed) +
               "; replay: " + replay(seed);
      break;
    }
  }
  const std::string line =
      "stress: " + name + " ran " + std::to_string(ran) + " iterations" +
      (ran < n ? " of " + std::to_string(n) : "") + " (seeds " + std::to_string(first) + ".." +
      std::to_string(first + static_cast<std::uint64_t>(ran) - 1) + ")" + failed;
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  if (const char* path = std::getenv("STRESS_SUMMARY"); path != nullptr && *path != '\0') {
    if (std::FILE* f = std::fopen(path, "a")) {  // one short write: atomic with O_APPEND
      std::fputs((line + "\n").c_str(), f);
      std::fclose(f);
    }
  }
}

/// Like WaitUntil, but lets a threaded broker settle with wait_idle between checks.
inline bool WaitIdleUntil(Broker& b, const std::function<bool()>& pred) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > give_up) return pred();
    (void)b.wait_idle(Millis{50});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

inline BrokerOptions SyncBroker(std::shared_ptr<Clock> clock = std::make_shared<ManualClock>()) {
  return BrokerOptions::synchronous().with_clock(std::move(clock));
}

inline BrokerOptions LaneBroker() {
  return BrokerOptions::lane()
      .with_clock(std::make_shared<ManualClock>())
      .with_retry_backoff(Millis{1});
}

inline BrokerOptions PoolBroker(std::size_t threads = 2, Millis handler_timeout = Millis{0}) {
  return BrokerOptions::pool(threads, handler_timeout)
      .with_clock(std::make_shared<ManualClock>())
      .with_retry_backoff(Millis{1});
}

inline PushOptions Push(int max_deliveries = kDefaultMaxDeliveries,
                        StartPosition start = StartPosition::end()) {
  PushOptions o;
  o.max_deliveries = max_deliveries;
  o.start = start;
  return o;
}

inline PullOptions Pull(Millis ack_timeout = Millis{30000},
                        int max_deliveries = kDefaultMaxDeliveries, Headers filter = {},
                        StartPosition start = StartPosition::end()) {
  PullOptions o;
  o.ack_timeout = ack_timeout;
  o.max_deliveries = max_deliveries;
  o.header_filter = std::move(filter);
  o.start = start;
  return o;
}

/// Everything observable about a broker, to prove that a failed call changed nothing.
struct Snapshot {
  std::vector<std::string> topics;
  std::map<std::string, Offset> end;
  std::map<std::string, Offset> oldest;
  std::map<std::string, std::vector<std::string>> subscriptions;
  std::map<std::string, SubscriptionStats> stats;  // "topic/name"
  std::map<std::string, std::vector<std::pair<Offset, std::string>>> dead;
  bool operator==(const Snapshot&) const = default;
};

inline Snapshot Snap(const Broker& b) {
  Snapshot s;
  s.topics = b.topics();
  for (const auto& t : s.topics) {
    s.end[t] = b.end_offset(t);
    s.oldest[t] = b.oldest_offset(t);
    s.subscriptions[t] = b.subscriptions(t);
    for (const auto& n : s.subscriptions[t]) {
      s.stats[t + "/" + n] = b.stats(t, n);
      for (const auto& d : b.dead_letters(t, n)) {
        s.dead[t + "/" + n].emplace_back(d.message->offset(), d.reason);
      }
    }
  }
  return s;
}

inline std::ostream& operator<<(std::ostream& os, const Snapshot& s) {
  os << "topics:";
  for (const auto& t : s.topics)
    os << " " << t << "[" << s.oldest.at(t) << "," << s.end.at(t) << ")";
  for (const auto& [k, v] : s.stats) os << "\n  " << k << " " << v;
  return os;
}

}  // namespace broker::testing

/// Asserts that `stmt` throws exactly ErrType with code `code`, and that the broker `b`
/// looks the same afterwards (SPEC R14).
#define EXPECT_ERROR_CHANGES_NOTHING(b, ErrType, expected_code, stmt)                 \
  do {                                                                                \
    const auto before_ = ::broker::testing::Snap(b);                                  \
    bool caught_ = false;                                                             \
    try {                                                                             \
      stmt;                                                                           \
    } catch (const ErrType& e_) {                                                     \
      caught_ = true;                                                                 \
      EXPECT_EQ(e_.code(), expected_code) << #stmt;                                   \
    } catch (const std::exception& e_) {                                              \
      ADD_FAILURE() << #stmt << " threw the wrong exception: " << e_.what();          \
    }                                                                                 \
    EXPECT_TRUE(caught_) << #stmt << " did not throw " #ErrType;                      \
    EXPECT_EQ(::broker::testing::Snap(b), before_) << #stmt << " changed the broker"; \
  } while (false)
