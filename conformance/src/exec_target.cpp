// A child process speaking the target protocol as a conformance target (exec_target.h).
#include "conformance/exec_target.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <variant>

#include "conformance/local_process.h"
#include "oplang/text.h"
#include "sync/sync.h"

namespace conformance {

/// The child, its pipes and the replies read so far. Thread-safe: the target and its
/// workers call at once; one reader thread files each reply under its request's id. Locks
/// mutex_ (never while reading or writing a pipe) and, around each request's bytes,
/// write_mutex_ (never together).
class ExecChannel {
 public:
  ExecChannel(std::vector<std::string> command, std::chrono::milliseconds limit);
  ~ExecChannel();
  ExecChannel(const ExecChannel&) = delete;
  ExecChannel& operator=(const ExecChannel&) = delete;

  [[nodiscard]] const Hello& hello() const { return hello_; }
  [[nodiscard]] model::Millis ahead() const { return ahead_.load(); }
  /// Sends op as worker `worker` and returns the engine's outcome. Throws TargetFailure.
  oplang::Outcome call(std::uint32_t worker, const oplang::Op& op);

 private:
  void read_loop();
  // Ends the child (EOF on its stdin, then SIGKILL after 2 s), the reader and the temp dir.
  void shut_down();
  // Marks the channel broken (the first reason wins) and wakes every caller.
  void break_with(const std::string& why) EXCLUDES(mutex_);
  [[noreturn]] void throw_broken() EXCLUDES(mutex_);
  // The command, and the last lines the child wrote to stderr.
  [[nodiscard]] std::string context() const;

  // Constant after construction.
  std::string command_text_;
  std::chrono::milliseconds limit_;
  std::string dir_;
  LocalProcess process_;
  int to_child_ = -1;
  int from_child_ = -1;
  Hello hello_;

  broker::sync::Mutex write_mutex_;
  mutable broker::sync::Mutex mutex_;
  broker::sync::CondVar changed_;
  std::optional<std::string> hello_line_ GUARDED_BY(mutex_);
  std::set<std::uint64_t> asked_ GUARDED_BY(mutex_);  // requests without a reply yet
  std::map<std::uint64_t, std::pair<Reply, std::string>> replies_ GUARDED_BY(mutex_);
  std::string broken_ GUARDED_BY(mutex_);  // "" while the channel works
  std::uint64_t next_id_ GUARDED_BY(mutex_) = 1;
  std::atomic<model::Millis> ahead_{0};
  std::atomic<bool> stopping_{false};
  std::thread reader_;
};

namespace {

std::string shown(const std::string& line) {
  constexpr std::size_t kMax = 300;
  return line.size() <= kMax
             ? line
             : line.substr(0, kMax) + "...(" + std::to_string(line.size()) + " bytes)";
}

}  // namespace

ExecChannel::ExecChannel(std::vector<std::string> command, std::chrono::milliseconds limit)
    : limit_(limit) {
  if (command.empty()) throw std::invalid_argument("exec: no command");
  for (const std::string& a : command) command_text_ += (command_text_.empty() ? "" : " ") + a;
  // A child that died makes a write fail with EPIPE, not kill the kit.
  ::signal(SIGPIPE, SIG_IGN);
  dir_ = make_temp_dir("exec");
  const int exec_errno =
      process_.spawn_piped(command, dir_ + "/stderr.log", dir_, to_child_, from_child_);
  if (exec_errno != 0) {
    std::filesystem::remove_all(dir_);
    throw TargetFailure("exec: cannot run " + command_text_ + ": " + std::strerror(exec_errno));
  }
  reader_ = std::thread([this] { read_loop(); });
  const auto deadline = std::chrono::steady_clock::now() + limit_;
  std::optional<std::string> line;
  {
    broker::sync::MutexLock hold(mutex_);
    while (!hello_line_ && broken_.empty() && std::chrono::steady_clock::now() < deadline) {
      changed_.wait_for(mutex_, std::chrono::milliseconds(50));
    }
    if (!hello_line_ && broken_.empty()) {
      broken_ = "no hello within " + std::to_string(limit_.count()) + " ms";
    }
    line = hello_line_;
  }
  try {
    if (!line) throw_broken();
    try {
      hello_ = decode_hello(*line);
    } catch (const ProtocolError& e) {
      break_with(std::string("line 1, the hello, is not the protocol's (") + e.what() +
                 "): " + shown(*line));
      throw_broken();
    }
  } catch (...) {
    shut_down();
    throw;
  }
}

ExecChannel::~ExecChannel() { shut_down(); }

void ExecChannel::shut_down() {
  if (to_child_ >= 0) {
    ::close(to_child_);  // EOF: the child ends its run and exits
    to_child_ = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (process_.alive() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    process_.kill9();
  }
  stopping_ = true;
  if (reader_.joinable()) reader_.join();
  if (from_child_ >= 0) ::close(from_child_);
  from_child_ = -1;
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    dir_.clear();
  }
}

std::string ExecChannel::context() const {
  std::deque<std::string> lines;
  tail_of(dir_ + "/stderr.log", 5, lines);
  std::string text = " (target: " + command_text_ + ")";
  if (!lines.empty()) {
    text += "; its stderr ends:";
    for (const std::string& l : lines) text += "\n  " + l;
  }
  return text;
}

void ExecChannel::break_with(const std::string& why) {
  broker::sync::MutexLock hold(mutex_);
  if (broken_.empty()) broken_ = why;
  changed_.notify_all();
}

void ExecChannel::throw_broken() {
  std::string why;
  {
    broker::sync::MutexLock hold(mutex_);
    why = broken_;
  }
  throw TargetFailure("exec: " + why + context());
}

void ExecChannel::read_loop() {
  LineSplitter splitter;
  std::size_t number = 0;
  char buf[65536];
  while (!stopping_) {
    pollfd p{from_child_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t n = ready < 0 ? -1 : ::read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      break_with(n == 0 ? "the target closed its stdout (it exited?) after " +
                              std::to_string(number) + " lines"
                        : std::string("reading the target's stdout: ") + std::strerror(errno));
      return;
    }
    for (const std::string& line : splitter.feed(std::string(buf, static_cast<std::size_t>(n)))) {
      ++number;
      if (number == 1) {
        broker::sync::MutexLock hold(mutex_);
        hello_line_ = line;
        changed_.notify_all();
        continue;
      }
      Reply reply;
      try {
        reply = decode_protocol_reply(line);
      } catch (const ProtocolError& e) {
        break_with("reply line " + std::to_string(number) + " is not the protocol's (" + e.what() +
                   "): " + shown(line));
        return;
      }
      broker::sync::MutexLock hold(mutex_);
      if (asked_.erase(reply.id) == 0) {
        if (broken_.empty()) {
          broken_ = "reply line " + std::to_string(number) + " answers id " +
                    std::to_string(reply.id) + ", which no request waits for: " + shown(line);
        }
        changed_.notify_all();
        return;
      }
      replies_.emplace(reply.id,
                       std::make_pair(std::move(reply),
                                      "reply line " + std::to_string(number) + ": " + shown(line)));
      changed_.notify_all();
    }
  }
}

oplang::Outcome ExecChannel::call(std::uint32_t worker, const oplang::Op& op) {
  Request request;
  request.worker = worker;
  request.op = op;
  std::uint64_t id = 0;
  {
    broker::sync::MutexLock hold(mutex_);
    if (broken_.empty()) {
      id = next_id_++;
      asked_.insert(id);
    }
  }
  if (id == 0) throw_broken();
  request.id = id;
  const std::string line = encode_request(request) + "\n";
  // An advance on real time takes its real time before the reply.
  std::chrono::milliseconds limit = limit_;
  if (const auto* a = std::get_if<oplang::Advance>(&op); a && hello_.unit_ms > 0 && a->ms > 0) {
    limit += std::chrono::milliseconds(a->ms * hello_.unit_ms);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  {
    broker::sync::MutexLock hold(write_mutex_);
    for (std::size_t done = 0; done < line.size();) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{to_child_, POLLOUT, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        break_with("the target read no request for " + std::to_string(limit.count()) +
                   " ms: " + shown(line.substr(0, line.size() - 1)));
        break;
      }
      const ssize_t n = ::write(to_child_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        break_with(std::string("writing a request to the target: ") + std::strerror(errno) + ": " +
                   shown(line.substr(0, line.size() - 1)));
        break;
      }
      done += static_cast<std::size_t>(n);
    }
  }
  std::optional<std::pair<Reply, std::string>> got;
  {
    broker::sync::MutexLock hold(mutex_);
    while (replies_.find(id) == replies_.end() && broken_.empty() &&
           std::chrono::steady_clock::now() < deadline) {
      changed_.wait_for(mutex_, std::chrono::milliseconds(20));
    }
    if (auto it = replies_.find(id); it != replies_.end()) {
      got = std::move(it->second);
      replies_.erase(it);
    } else if (broken_.empty()) {
      broken_ = "no reply within " + std::to_string(limit.count()) + " ms to request " +
                shown(line.substr(0, line.size() - 1));
      changed_.notify_all();
    }
  }
  if (!got) throw_broken();
  Reply& reply = got->first;
  ahead_ = reply.ahead_ms;
  if (!reply.outcome) {
    throw TargetFailure("exec: the target could not run " + oplang::print(op) + ": " +
                        reply.failure + context());
  }
  if (!reply.outcome->error && !answers(op, reply.outcome->value)) {
    const std::string why =
        got->second + " answers " + oplang::print(op) + " with a value of another kind";
    break_with(why);
    throw_broken();
  }
  return std::move(*reply.outcome);
}

namespace {

// A worker: the same channel, its own number in each request.
class ExecWorker final : public Target {
 public:
  ExecWorker(std::shared_ptr<ExecChannel> channel, std::uint32_t number)
      : channel_(std::move(channel)), number_(number) {}
  [[nodiscard]] std::string name() const override {
    return channel_->hello().name + " worker " + std::to_string(number_);
  }
  [[nodiscard]] bool serves(const oplang::Op& op) const override {
    return hello_serves(channel_->hello(), op);
  }
  oplang::Outcome step(const oplang::Op& op) override {
    if (!serves(op)) throw std::invalid_argument("not served: " + oplang::print(op));
    return channel_->call(number_, op);
  }
  [[nodiscard]] model::Millis lag() const override { return channel_->ahead(); }

 private:
  std::shared_ptr<ExecChannel> channel_;
  std::uint32_t number_;
};

}  // namespace

ExecTarget::ExecTarget(std::vector<std::string> command, std::chrono::milliseconds reply_limit)
    : channel_(std::make_shared<ExecChannel>(std::move(command), reply_limit)) {}

ExecTarget::~ExecTarget() = default;

std::string ExecTarget::name() const { return channel_->hello().name; }

const Hello& ExecTarget::hello() const { return channel_->hello(); }

bool ExecTarget::serves(const oplang::Op& op) const { return hello_serves(channel_->hello(), op); }

oplang::Outcome ExecTarget::step(const oplang::Op& op) {
  if (!serves(op)) throw std::invalid_argument("not served: " + oplang::print(op));
  return channel_->call(0, op);
}

model::Millis ExecTarget::lag() const { return channel_->ahead(); }

bool ExecTarget::filter_is_the_adapters() const { return channel_->hello().filter_is_the_adapters; }

std::unique_ptr<Target> ExecTarget::worker() {
  if (!channel_->hello().workers) return nullptr;
  return std::make_unique<ExecWorker>(channel_, next_worker_++);
}

std::optional<model::Stats> ExecTarget::stats(const std::string& topic,
                                              const std::string& subscription) {
  if (!serves(oplang::GetStats{topic, subscription})) return std::nullopt;
  const oplang::Outcome out = channel_->call(0, oplang::GetStats{topic, subscription});
  if (out.error) {
    throw TargetFailure("exec: stats(" + topic + ", " + subscription +
                        ") failed: " + model::to_string(*out.error));
  }
  return std::get<model::Stats>(out.value);
}

}  // namespace conformance
