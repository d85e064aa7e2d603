// SPEC R19 on the real file system: a child process publishes (four threads: the group
// commit path) and acks (one thread) and is killed with SIGKILL at a random moment; the
// parent then opens the same directory and checks that every publish and every ack the
// child saw return survived. Twenty rounds run on one directory, so each child also
// recovers what the previous kill left (recovery after recovery).
//
// The child reports through a pipe, one line per call that returned, each written with one
// write(2) of fewer than PIPE_BUF bytes (atomic: lines of different threads never mix):
//   R                   the broker is open, the topic and the subscription exist
//   P <offset> <id>     publish of the message named <id> returned <offset>
//   A <committed>       an ack returned true; stats().committed right after it
//   E <what>            the child failed (it exits at once)
// Lines the child finished writing before the kill count; a partial last line is ignored.
//
// The seed is printed with every failure; KILL9_SEED=<seed> replays the same kill delays and
// ack choices (the threads' interleaving is the machine's).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

namespace fs = std::filesystem;
using Steady = std::chrono::steady_clock;

constexpr const char* kTopic = "t";
constexpr const char* kSub = "s";
constexpr const char* kCheckSub = "check";
constexpr int kRounds = 20;
constexpr unsigned kPublishers = 4;
constexpr std::uint32_t kMaxPublishesPerThread = 200000;  // a bound; the kill comes first
constexpr std::uint64_t kMaxAhead = 64;
constexpr auto kChildLifeLimit = std::chrono::seconds(5);  // a child nobody kills ends itself
constexpr auto kRoundHangGuard = std::chrono::seconds(20);
constexpr std::size_t kPollBatch = 512;

/// This suite's temporary directories.
class TempDir : public testing::TempDir {
 public:
  TempDir() : testing::TempDir("broker-kill9") {}
};

std::uint64_t kill9_seed() {
  if (const char* s = std::getenv("KILL9_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}() ^
         static_cast<std::uint64_t>(Steady::now().time_since_epoch().count());
}

std::string replay_command(std::uint64_t seed) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return "KILL9_SEED=" + std::to_string(seed) + " " + testing::StressBinary() +
         " --gtest_filter='" + info->test_suite_name() + "." + info->name() + "'";
}

// ---- the messages: each one's content follows from its id ----

/// Names one publish: the round, the publishing thread and its sequence number.
struct Id {
  unsigned round = 0;
  unsigned thread = 0;
  unsigned i = 0;
};

std::string text(const Id& id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "r%02u-t%u-i%06u", id.round, id.thread, id.i);
  return buf;
}

std::optional<Id> parse_id(const std::string& s) {
  Id id;
  int used = 0;
  if (std::sscanf(s.c_str(), "r%2u-t%1u-i%6u%n", &id.round, &id.thread, &id.i, &used) != 3 ||
      static_cast<std::size_t>(used) != s.size() || text(id) != s) {
    return std::nullopt;
  }
  return id;
}

/// The payload, headers and key of the message named id (lengths vary, so segments roll
/// at different records).
MessagePtr expected(const Id& id) {
  return make_message(
      0, text(id) + ":" + std::string(id.i % 61, static_cast<char>('a' + (id.i + id.thread) % 26)),
      {{"id", text(id)}, {"round", std::to_string(id.round)}}, "key-t" + std::to_string(id.thread));
}

bool same_content(const Message& a, const Message& b) {
  return a.payload() == b.payload() && a.headers() == b.headers() && a.key() == b.key();
}

std::string describe(const Message& m) {
  std::ostringstream os;
  os << "offset " << m.offset() << " payload '" << m.payload() << "' key '" << m.key()
     << "' headers {";
  for (const auto& [k, v] : m.headers()) os << k << "=" << v << " ";
  os << "}";
  return os.str();
}

/// The id a stored message claims (its payload up to ':'), if its whole content matches it.
std::optional<Id> well_formed(const Message& m) {
  const std::optional<Id> id = parse_id(std::string(m.payload().substr(0, m.payload().find(':'))));
  if (!id || !same_content(m, *expected(*id))) return std::nullopt;
  return id;
}

PullOptions sub_options() {
  PullOptions o;
  o.start = StartPosition::beginning();
  o.ack_timeout = Millis{600000};  // nothing expires while a round runs
  o.max_deliveries = 0;            // a message polled in many rounds never dies
  return o;
}

// ---- the child: plain code, no GoogleTest; it ends with _exit ----

constexpr int kChildFailed = 3;
constexpr int kPipeBroken = 4;

/// One write(2) of the whole line: atomic for a pipe, since the line is < PIPE_BUF.
void emit(int fd, const std::string& line) {
  for (;;) {
    const ssize_t n = ::write(fd, line.data(), line.size());
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(line.size())) ::_exit(kPipeBroken);
    return;
  }
}

[[noreturn]] void child_fail(int fd, std::string what) {
  std::replace(what.begin(), what.end(), '\n', ' ');
  emit(fd, "E " + what.substr(0, 300) + "\n");
  ::_exit(kChildFailed);
}

std::string offset_field(Offset o) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(o));
  return buf;
}

/// Opens the directory, publishes from kPublishers threads and acks from one until killed.
[[noreturn]] void run_child(const StorageOptions& storage, unsigned round, std::uint64_t seed,
                            int fd) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a parent that died itself
#endif
  try {
    Broker b(BrokerOptions::synchronous().with_storage(storage));
    try {
      b.create_topic(kTopic);
    } catch (const DuplicateTopic&) {
      // Later rounds: the topic came back from the directory.
    }
    b.subscribe_pull(kTopic, kSub, sub_options());  // silent when it came back
    emit(fd, "R\n");
    const auto give_up = Steady::now() + kChildLifeLimit;
    std::atomic<unsigned> publishing{kPublishers};
    // The publishers stay at most kMaxAhead messages ahead of the acker, so acks keep up
    // even under `none` (where publish costs no sync) and the log stays small.
    std::atomic<std::uint64_t> published{0};
    std::atomic<std::uint64_t> polled{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kPublishers; ++t) {
      threads.emplace_back([&, t] {
        try {
          for (std::uint32_t i = 0; i < kMaxPublishesPerThread && Steady::now() < give_up; ++i) {
            while (published.load() > polled.load() + kMaxAhead && Steady::now() < give_up) {
              std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            const Id id{round, t, i};
            const MessagePtr m = expected(id);
            const Offset o =
                b.publish(kTopic, std::string(m->payload()), m->headers(), std::string(m->key()));
            emit(fd, "P " + offset_field(o) + " " + text(id) + "\n");
            ++published;
          }
        } catch (const std::exception& e) {
          child_fail(fd, std::string("publish threw: ") + e.what());
        }
        --publishing;
      });
    }
    threads.emplace_back([&] {
      try {
        std::mt19937_64 rng(seed * 1000003u + round);
        std::vector<Receipt> held;
        // Bounded: the publishers stop at give_up, then the backlog and `held` run out.
        while (publishing.load() > 0 || !held.empty()) {
          for (const Received& r : b.poll_wait(kTopic, kSub, "acker", 4, Millis{2})) {
            held.push_back(r.receipt);
            ++polled;
          }
          // Ack a random half of what is held (all once it piles up), so the committed
          // position waits at gaps and then jumps.
          std::shuffle(held.begin(), held.end(), rng);
          const std::size_t keep = held.size() > 8 ? 0 : held.size() / 2;
          while (held.size() > keep) {
            const Receipt r = held.back();
            held.pop_back();
            if (!b.ack(r, b.clock().now())) {
              child_fail(fd, "ack of offset " + std::to_string(r.offset) + " returned false");
            }
            // Only this thread acks, so the committed position right after ack returned
            // is the one that ack made durable.
            emit(fd, "A " + offset_field(b.stats(kTopic, kSub).committed) + "\n");
          }
        }
      } catch (const std::exception& e) {
        child_fail(fd, std::string("ack thread threw: ") + e.what());
      }
    });
    for (auto& th : threads) th.join();
  } catch (const std::exception& e) {
    child_fail(fd, std::string("child threw: ") + e.what());
  }
  ::_exit(0);
}

// ---- the parent ----

/// Kills and reaps the child on every way out of a round (a failed assertion included).
class ChildGuard {
 public:
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ~ChildGuard() {
    if (pid_ > 0) (void)kill_and_reap();
  }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  /// SIGKILL (harmless if it has exited already), then waitpid; returns the wait status.
  int kill_and_reap() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_;
};

/// Closes a descriptor at the end of its scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { ::close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

/// What one child reported before it died.
struct Seen {
  struct Publish {
    Offset offset = 0;
    Id id;
  };
  bool ready = false;
  std::vector<Publish> publishes;  // in the order the child wrote them
  std::size_t acks = 0;
  std::optional<Offset> max_committed;  // the highest committed an ack returned with
  std::vector<std::string> errors;      // E lines and lines that do not parse
};

void parse_line(const std::string& line, Seen& seen) {
  if (line == "R") {
    seen.ready = true;
  } else if (line.size() > 2 && line.starts_with("P ")) {
    const std::size_t space = line.find(' ', 2);
    const std::optional<Id> id =
        space == std::string::npos ? std::nullopt : parse_id(line.substr(space + 1));
    if (!id) {
      seen.errors.push_back("unparsable line '" + line + "'");
      return;
    }
    seen.publishes.push_back({std::stoull(line.substr(2, space - 2)), *id});
  } else if (line.size() > 2 && line.starts_with("A ")) {
    const Offset c = std::stoull(line.substr(2));
    ++seen.acks;
    seen.max_committed = std::max(seen.max_committed.value_or(0), c);
  } else if (line.starts_with("E ")) {
    seen.errors.push_back("child: " + line.substr(2));
  } else {
    seen.errors.push_back("unparsable line '" + line + "'");
  }
}

/// How one round went, besides what the child reported.
struct Round {
  Seen seen;
  bool from_fork = false;  // the kill delay ran from the fork, not from R
  bool killed_before_ready = false;
  int delay_ms = 0;
  std::chrono::milliseconds child_life{0};
};

/// Starts a child on the directory, kills it `delay` after it said R (or, one round in four,
/// after the fork: then the kill may land while it opens and recovers the directory),
/// reaps it and reads everything it finished writing.
void run_round(const StorageOptions& storage, unsigned round, std::uint64_t seed,
               std::mt19937_64& rng, Round& out) {
  out.from_fork = rng() % 4 == 0;
  const bool from_fork = out.from_fork;
  out.delay_ms = from_fork ? std::uniform_int_distribution<int>(0, 20)(rng)
                           : std::uniform_int_distribution<int>(5, 60)(rng);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0) << std::strerror(errno);
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = Steady::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    run_child(storage, round, seed, fds[1]);
  }
  ::close(fds[1]);
  const FdCloser closer(fds[0]);
  ASSERT_GT(pid, 0) << "fork failed: " << std::strerror(errno);
  ChildGuard child(pid);

  std::string buffer;
  auto consume = [&](bool final) {
    std::size_t begin = 0;
    for (std::size_t nl; (nl = buffer.find('\n', begin)) != std::string::npos; begin = nl + 1) {
      parse_line(buffer.substr(begin, nl - begin), out.seen);
    }
    buffer.erase(0, begin);
    if (final) buffer.clear();  // a line the kill cut short says nothing
  };
  auto read_some = [&](int timeout_ms) {  // false at end of file
    pollfd p{fds[0], POLLIN, 0};
    const int rc = ::poll(&p, 1, timeout_ms);
    if (rc < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    if (rc <= 0) return true;
    char chunk[65536];
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0) return errno == EINTR;
    if (n == 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    consume(false);
    return true;
  };

  std::optional<Steady::time_point> kill_at;
  if (from_fork) kill_at = start + std::chrono::milliseconds(out.delay_ms);
  bool eof = false;
  for (;;) {
    const auto now = Steady::now();
    if (!kill_at && out.seen.ready) kill_at = now + std::chrono::milliseconds(out.delay_ms);
    if (kill_at && now >= *kill_at) break;
    ASSERT_LT(now - start, kRoundHangGuard) << "the child never said R (round " << round << ")";
    const auto wait = kill_at ? std::chrono::ceil<std::chrono::milliseconds>(*kill_at - now)
                              : std::chrono::milliseconds(100);
    if (!read_some(static_cast<int>(wait.count()))) {
      eof = true;
      break;
    }
  }
  out.killed_before_ready = !out.seen.ready;
  const int status = child.kill_and_reap();
  out.child_life = std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - start);
  while (!eof && read_some(1000)) {  // every write end is closed now: this ends
  }
  consume(true);

  std::string errors;
  for (const std::string& e : out.seen.errors) errors += "\n  " + e;
  ASSERT_TRUE(out.seen.errors.empty()) << "round " << round << ":" << errors;
  ASSERT_TRUE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
              (WIFEXITED(status) && WEXITSTATUS(status) == 0))
      << "round " << round << ": the child ended with wait status " << status;
}

/// Named failures, counted by kind (the vocabulary of SPEC "Anomalies" where it has a word).
class Anomalies {
 public:
  void add(const std::string& kind, const std::string& what) {
    ++counts_[kind];
    if (examples_.size() < 20) examples_.push_back(kind + ": " + what);
  }
  [[nodiscard]] bool empty() const { return counts_.empty(); }
  [[nodiscard]] std::string report() const {
    std::string out;
    for (const auto& [kind, n] : counts_) out += " " + kind + " x" + std::to_string(n);
    for (const std::string& e : examples_) out += "\n  " + e;
    return out;
  }

 private:
  std::map<std::string, std::size_t> counts_;
  std::vector<std::string> examples_;
};

/// What the parent knows across rounds.
struct History {
  std::map<Offset, Id> published;          // every publish a child saw return, by offset
  std::map<Offset, MessagePtr> read_back;  // every message an earlier check read: never changes
  std::optional<Offset> max_committed;     // the highest committed an ack returned with
  Offset end = 0;                          // the end offset the previous check recovered
  Offset committed = 0;                    // the committed position it recovered
  // For the summary line.
  std::size_t publishes = 0;
  std::size_t acks = 0;
  std::size_t torn_tails = 0;
  std::size_t kills_before_ready = 0;
};

/// Everything `sub` hands out from its current position, in the order poll returns it.
std::vector<MessagePtr> poll_all(Broker& b, const std::string& sub, Offset bound) {
  std::vector<MessagePtr> out;
  for (Offset polls = 0; polls <= bound / kPollBatch + 1; ++polls) {  // bounded
    const std::vector<Received> got = b.poll(kTopic, sub, "checker", kPollBatch, b.clock().now());
    if (got.empty()) break;
    for (const Received& r : got) out.push_back(r.message);
  }
  return out;
}

/// Opens the directory the child left and checks R19 against what it saw return.
void check_directory(const StorageOptions& storage, const Seen& seen, History& h, Anomalies& a) {
  // What the child reported, against itself and the rounds before.
  std::map<unsigned, Offset> last_of_thread;
  for (const Seen::Publish& p : seen.publishes) {
    const std::string name = text(p.id);
    if (auto it = h.published.find(p.offset); it != h.published.end()) {
      a.add("duplicate-offset", "publishes of " + text(it->second) + " and " + name +
                                    " both returned offset " + std::to_string(p.offset));
    }
    if (p.offset < h.end) {
      a.add("offset-reused", "publish of " + name + " returned offset " + std::to_string(p.offset) +
                                 ", below the recovered end " + std::to_string(h.end));
    }
    if (auto it = last_of_thread.find(p.id.thread);
        it != last_of_thread.end() && p.offset <= it->second) {
      a.add("nonmonotonic", "publish of " + name + " returned " + std::to_string(p.offset) +
                                " after its thread's previous publish returned " +
                                std::to_string(it->second));
    }
    last_of_thread[p.id.thread] = p.offset;
    h.published.emplace(p.offset, p.id);
  }
  if (seen.max_committed) {
    h.max_committed = std::max(h.max_committed.value_or(0), *seen.max_committed);
  }
  h.publishes += seen.publishes.size();
  h.acks += seen.acks;

  std::optional<Broker> b;
  try {
    b.emplace(BrokerOptions::synchronous().with_storage(storage));
  } catch (const std::exception& e) {
    a.add("recovery-failed", e.what());
    return;
  }
  for (const Truncation& t : b->recovery().truncations) {
    if (t.reason == "torn tail") {
      ++h.torn_tails;
    } else {  // a kill can only tear the end of a file
      a.add("corrupt", t.reason + " in " + t.file + " at byte " + std::to_string(t.position));
    }
  }
  const std::vector<std::string> topics = b->topics();
  if (std::find(topics.begin(), topics.end(), kTopic) == topics.end()) {
    if (!h.published.empty()) a.add("lost-topic", "topic 't' is gone after publishes returned");
    return;
  }

  // The whole log, read back through a fresh subscription from the beginning.
  const Offset end = b->end_offset(kTopic);
  if (b->oldest_offset(kTopic) != 0) {
    a.add("unexpected",
          "oldest offset " + std::to_string(b->oldest_offset(kTopic)) + " without retention");
  }
  PullOptions from_beginning = sub_options();
  b->subscribe_pull(kTopic, kCheckSub, from_beginning);
  const std::vector<MessagePtr> log = poll_all(*b, kCheckSub, end);
  b->unsubscribe(kTopic, kCheckSub);
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i]->offset() != i) {
      a.add("poll-skip", "reading the log from the beginning, message " + std::to_string(i) +
                             " has offset " + std::to_string(log[i]->offset()));
      return;
    }
  }
  if (log.size() != end) {
    a.add("lost", "reading the log from the beginning gave " + std::to_string(log.size()) +
                      " messages; end_offset is " + std::to_string(end));
  }
  if (!h.published.empty() && end <= h.published.rbegin()->first) {
    a.add("lost-write", "end_offset is " + std::to_string(end) + " but a publish returned " +
                            std::to_string(h.published.rbegin()->first));
  }

  // No offset ever holds two messages; every message is one some child published, once.
  std::map<std::string, Offset> offset_of_id;
  for (const MessagePtr& m : log) {
    const std::optional<Id> id = well_formed(*m);
    if (!id) {
      a.add("unexpected", "a message no child published: " + describe(*m));
      continue;
    }
    if (auto [it, fresh] = offset_of_id.emplace(text(*id), m->offset()); !fresh) {
      a.add("duplicated", text(*id) + " is stored at offsets " + std::to_string(it->second) +
                              " and " + std::to_string(m->offset()));
    }
    if (auto it = h.read_back.find(m->offset());
        it != h.read_back.end() && !same_content(*it->second, *m)) {
      a.add("overwritten",
            "an earlier check read " + describe(*it->second) + ", now " + describe(*m));
    }
  }
  for (const auto& [offset, id] : h.published) {
    if (offset >= log.size()) {
      a.add("lost-write", "publish of " + text(id) + " returned offset " + std::to_string(offset) +
                              "; the log ends at " + std::to_string(log.size()));
    } else if (!same_content(*log[offset], *expected(id))) {
      a.add("lost-write", "publish of " + text(id) + " returned offset " + std::to_string(offset) +
                              ", which holds " + describe(*log[offset]));
    }
  }

  // The acks: the committed position is at least the one the last ack seen returned with,
  // and everything from it on is offered again.
  const std::vector<std::string> subs = b->subscriptions(kTopic);
  if (std::find(subs.begin(), subs.end(), kSub) == subs.end()) {
    if (h.max_committed) a.add("lost-subscription", "subscription 's' is gone after acks");
  } else {
    const Offset committed = b->stats(kTopic, kSub).committed;
    if (h.max_committed && committed < *h.max_committed) {
      a.add("lost-commit", "recovered committed position " + std::to_string(committed) +
                               " is below " + std::to_string(*h.max_committed) +
                               ", the committed position an ack returned with");
    }
    if (committed < h.committed) {
      a.add("lost-commit", "recovered committed position " + std::to_string(committed) +
                               " is below the one the previous restart recovered, " +
                               std::to_string(h.committed));
    }
    if (committed > end) {
      a.add("unexpected", "committed position " + std::to_string(committed) + " is past the end " +
                              std::to_string(end));
    }
    const std::vector<MessagePtr> again = poll_all(*b, kSub, end);
    for (std::size_t i = 0; i < again.size(); ++i) {
      const Offset want = committed + i;
      if (again[i]->offset() != want) {
        a.add("poll-skip", "from the committed position " + std::to_string(committed) +
                               " poll gave offset " + std::to_string(again[i]->offset()) +
                               " where " + std::to_string(want) + " was due");
        break;
      }
      if (want < log.size() && !same_content(*again[i], *log[want])) {
        a.add("unexpected", "subscription 's' got " + describe(*again[i]) + ", the log holds " +
                                describe(*log[want]));
      }
    }
    if (committed <= end && again.size() != end - committed) {
      a.add("lost", "from the committed position " + std::to_string(committed) + " poll gave " +
                        std::to_string(again.size()) + " messages, up to the end " +
                        std::to_string(end) + " owes " + std::to_string(end - committed));
    }
    h.committed = committed;
  }
  for (const MessagePtr& m : log) h.read_back.emplace(m->offset(), m);
  h.end = end;
}

/// kRounds rounds of fork, random SIGKILL, check, all on one directory.
void run_rounds(FsyncPolicy publish_sync, FsyncPolicy commit_sync) {
  const std::uint64_t seed = kill9_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + "; replay: " + replay_command(seed));
  TempDir dir;
  StorageOptions storage;
  storage.directory = dir.str() + "/store";
  storage.publish_sync = publish_sync;
  storage.commit_sync = commit_sync;
  storage.segment_bytes = 64u << 10;          // segments roll every few hundred records
  storage.journal_compact_bytes = 16u << 10;  // and the journal is rewritten now and then
  std::mt19937_64 rng(seed);
  History h;
  const auto start = Steady::now();
  for (unsigned round = 1; round <= kRounds; ++round) {
    Round r;
    run_round(storage, round, seed, rng, r);
    if (::testing::Test::HasFatalFailure()) return;
    h.kills_before_ready += r.killed_before_ready ? 1 : 0;
    Anomalies a;
    check_directory(storage, r.seen, h, a);
    ASSERT_TRUE(a.empty()) << "seed " << seed << ", round " << round << " (kill " << r.delay_ms
                           << " ms after " << (r.from_fork ? "the fork" : "R")
                           << (r.killed_before_ready ? ", before R" : "") << ", child lived "
                           << r.child_life.count() << " ms, it saw " << r.seen.publishes.size()
                           << " publishes and " << r.seen.acks << " acks return):" << a.report();
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - start);
  std::printf(
      "kill9: %s seed %llu, %d rounds: %zu publishes and %zu acks seen to return, %zu kills "
      "before the child was ready, %zu torn tails cut, log end %llu, committed %llu, %lld ms\n",
      ::testing::UnitTest::GetInstance()->current_test_info()->name(),
      static_cast<unsigned long long>(seed), kRounds, h.publishes, h.acks, h.kills_before_ready,
      h.torn_tails, static_cast<unsigned long long>(h.end),
      static_cast<unsigned long long>(h.committed), static_cast<long long>(took.count()));
  std::fflush(stdout);
}

// Under `always` both halves of R19 at once: the child's publishes and acks run together,
// so a kill lands in either (or in the group commit several publishers share).
TEST(DurableKill9, EveryPublishAndAckSeenToReturnSurvivesSigkill) {
  run_rounds(FsyncPolicy::always(), FsyncPolicy::always());
}

// `none` promises nothing about a machine crash (the simulated file system covers that),
// but a SIGKILL ends only the process: every byte it wrote is in the operating system's
// page cache, and the next open reads it. The broker writes each record before the call
// returns, so the same checks hold as under `always`.
TEST(DurableKill9, WithoutFsyncAProcessKillLosesNothingWritten) {
  run_rounds(FsyncPolicy::none(), FsyncPolicy::none());
}

}  // namespace
}  // namespace broker
