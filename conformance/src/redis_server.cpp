// The redis-server fixture: loopback port, temporary directory, fork/exec, readiness,
// crash and restart, teardown.
#include "conformance/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "conformance/target.h"

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(5);
constexpr auto kPollInterval = std::chrono::milliseconds(20);

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return addr;
}

// A port the kernel just handed out on 127.0.0.1 (closed again: the server binds it next).
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw TargetFailure(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr = loopback(0);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw TargetFailure(std::string("bind 127.0.0.1:0: ") + std::strerror(err));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Whether something listens on 127.0.0.1:port. SO_REUSEADDR as the server sets it, so the
// TIME_WAIT connections a stopped server leaves behind do not count.
bool port_in_use(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr = loopback(port);
  const bool busy =
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return busy;
}

// Whether the server on port answers PING with PONG (not LOADING: the AOF is read).
bool answers_ping(int port) {
  const timeval connect_timeout{0, 200 * 1000};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, connect_timeout);
  if (c == nullptr) return false;
  bool ok = false;
  if (c->err == 0) {
    const timeval timeout{1, 0};
    redisSetTimeout(c, timeout);
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS &&
         std::string(reply->str, reply->len) == "PONG";
    if (reply != nullptr) freeReplyObject(reply);
  }
  redisFree(c);
  return ok;
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// $REDIS_SERVER_BIN, else redis-server on PATH, else /usr/bin, /usr/local/bin ("" if none).
std::string find_binary() {
  if (const char* env = std::getenv("REDIS_SERVER_BIN"); env != nullptr && *env != '\0') {
    return executable(env) ? std::string(env) : std::string();
  }
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    const std::string p(path);
    std::size_t start = 0;
    while (start <= p.size()) {
      const std::size_t colon = p.find(':', start);
      const std::size_t end = colon == std::string::npos ? p.size() : colon;
      if (end > start) dirs.push_back(p.substr(start, end - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  dirs.emplace_back("/usr/bin");
  dirs.emplace_back("/usr/local/bin");
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/redis-server";
    if (executable(candidate)) return candidate;
  }
  return {};
}

std::string make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  const std::string templ = base + "/conformance-redis-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw TargetFailure("mkdtemp " + templ + ": " + std::strerror(errno));
  }
  return std::string(buf.data());
}

void tail_of(const std::string& path, std::size_t n, std::deque<std::string>& lines) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    lines.push_back(line);
    if (lines.size() > n) lines.pop_front();
  }
}

std::string in_use(int port) {
  return "127.0.0.1:" + std::to_string(port) + " is in use: redis-server cannot listen there";
}

}  // namespace

RedisServer::RedisServer(RedisServerOptions options) : options_(options) {
  binary_ = find_binary();
  if (binary_.empty()) {
    throw TargetFailure(
        "redis-server not found (looked at $REDIS_SERVER_BIN, PATH, /usr/bin, /usr/local/bin): "
        "install it with `apt-get install -y redis-server`");
  }
  if (options_.port != 0) {
    if (port_in_use(options_.port)) throw TargetFailure(in_use(options_.port));
    port_ = options_.port;
  } else {
    port_ = free_loopback_port();
  }
  dir_ = make_temp_dir();
  try {
    start();
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

RedisServer::~RedisServer() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void RedisServer::start() {
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  const std::string out = dir_ + "/stdout.log";
  std::vector<std::string> args = {binary_,
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   std::to_string(port_),
                                   "--dir",
                                   dir_,
                                   "--logfile",
                                   dir_ + "/server.log",
                                   "--save",
                                   "",
                                   "--daemonize",
                                   "no",
                                   "--protected-mode",
                                   "yes",
                                   "--appendonly",
                                   options_.appendonly ? "yes" : "no"};
  if (options_.appendonly) {
    args.emplace_back("--appendfsync");
    args.emplace_back(*options_.appendonly == RedisServerOptions::Fsync::kAlways ? "always"
                                                                                 : "everysec");
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    throw TargetFailure(std::string("pipe2: ") + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(exec_pipe[0]);
    ::close(exec_pipe[1]);
    throw TargetFailure(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(argv[0], argv.data());
    const int err = errno;
    ssize_t ignored = ::write(exec_pipe[1], &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  pid_ = pid;
  reaped_ = false;
  ::setpgid(pid_, pid_);  // also from the parent: no race with an early kill(-pid)
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  const ssize_t got = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  ::close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    fail("cannot run " + binary_ + ": " + std::strerror(exec_errno) +
         " (install it with `apt-get install -y redis-server`)");
  }

  const auto deadline = Clock::now() + kStartTimeout;
  while (Clock::now() < deadline) {
    if (!alive()) {
      if (log_tail(50).find("Address already in use") != std::string::npos) fail(in_use(port_));
      fail("redis-server exited during start-up");
    }
    if (answers_ping(port_)) return;
    std::this_thread::sleep_for(kPollInterval);
  }
  fail("redis-server did not answer PING within 10 s");
}

std::string RedisServer::url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

std::string RedisServer::log_tail(std::size_t n) const {
  std::deque<std::string> lines;
  tail_of(dir_ + "/server.log", n, lines);
  std::deque<std::string> out;
  tail_of(dir_ + "/stdout.log", n, out);
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  if (!out.empty()) {
    text += "-- stdout/stderr --\n";
    for (const std::string& l : out) text += l + "\n";
  }
  return text;
}

bool RedisServer::alive() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
  return !reaped_;
}

void RedisServer::kill9() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

void RedisServer::restart() {
  stop();
  start();
}

void RedisServer::stop() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGTERM);
  const auto deadline = Clock::now() + kStopTimeout;
  while (Clock::now() < deadline) {
    if (!alive()) return;
    std::this_thread::sleep_for(kPollInterval);
  }
  kill9();
}

void RedisServer::fail(const std::string& what) {
  // One line: what went wrong, where, and the log's last line (the server says why).
  std::deque<std::string> last;
  tail_of(dir_ + "/server.log", 1, last);
  if (last.empty()) tail_of(dir_ + "/stdout.log", 1, last);
  std::string msg = what + " (" + binary_ + " on 127.0.0.1:" + std::to_string(port_) + ")";
  if (!last.empty()) msg += "; its log ends: " + last.back();
  stop();
  throw TargetFailure(msg);
}

}  // namespace conformance
