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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>
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

// Whether the server at host:port answers PING with PONG (not LOADING: the AOF is read).
bool answers_ping(int port, const std::string& host = "127.0.0.1") {
  const timeval connect_timeout{0, 200 * 1000};
  redisContext* c = redisConnectWithTimeout(host.c_str(), port, connect_timeout);
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

std::string in_use(int port) {
  return "127.0.0.1:" + std::to_string(port) + " is in use: redis-server cannot listen there";
}

}  // namespace

std::pair<std::string, int> redis_host_port(const std::string& url) {
  const std::string scheme = "redis://";
  const std::size_t colon = url.rfind(':');
  if (!url.starts_with(scheme) || colon == std::string::npos || colon < scheme.size()) {
    throw std::invalid_argument("the url must be redis://HOST:PORT, not " + url);
  }
  std::string port = url.substr(colon + 1);
  if (port.ends_with('/')) port.pop_back();
  try {
    return {url.substr(scheme.size(), colon - scheme.size()), std::stoi(port)};
  } catch (const std::exception&) {
    throw std::invalid_argument("bad port in " + url);
  }
}

std::pair<std::vector<std::pair<std::string, int>>, std::string> redis_sentinel_url(
    const std::string& url) {
  const std::string scheme = "redis-sentinel://";
  const std::size_t slash = url.find('/', scheme.size());
  if (!url.starts_with(scheme) || slash == std::string::npos || slash + 1 >= url.size()) {
    throw std::invalid_argument("the url must be redis-sentinel://HOST:PORT,.../NAME, not " + url);
  }
  std::vector<std::pair<std::string, int>> sentinels;
  const std::string list = url.substr(scheme.size(), slash - scheme.size());
  for (std::size_t from = 0; from <= list.size();) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    sentinels.push_back(redis_host_port("redis://" + list.substr(from, comma - from)));
    from = comma + 1;
  }
  return {sentinels, url.substr(slash + 1)};
}

bool redis_answers(const std::string& url) {
  try {
    if (url.starts_with("redis-sentinel://")) {  // a sentinel answers (it names the primary)
      for (const auto& [host, port] : redis_sentinel_url(url).first) {
        if (answers_ping(port, host)) return true;
      }
      return false;
    }
    const auto [host, port] = redis_host_port(url);
    return answers_ping(port, host);
  } catch (const std::invalid_argument&) {
    return false;
  }
}

RedisServer::RedisServer(RedisServerOptions options) : options_(options) {
  binary_ = find_server_binary("REDIS_SERVER_BIN", "redis-server", {"/usr/bin", "/usr/local/bin"});
  if (binary_.empty()) {
    throw TargetFailure(
        "redis-server not found (looked at $REDIS_SERVER_BIN, PATH, /usr/bin, /usr/local/bin): "
        "install it with `apt-get install -y redis-server`");
  }
  if (options_.port != 0) {
    // A namespace of its own has every port free.
    if (options_.host == "127.0.0.1" && port_in_use(options_.port)) {
      throw TargetFailure(in_use(options_.port));
    }
    port_ = options_.port;
  } else {
    port_ = free_loopback_port();
  }
  dir_ = make_temp_dir("redis");
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
  const std::string conf = dir_ + "/redis.conf";
  if (!options_.config_lines.empty() && !std::filesystem::exists(conf)) {
    std::ofstream out(conf);
    for (const std::string& line : options_.config_lines) out << line << "\n";
  }
  // Protected mode is off only on a namespace's private address, which the other nodes
  // must reach.
  const std::string protect = options_.host == "127.0.0.1" ? "yes" : "no";
  std::vector<std::string> args = options_.exec_prefix;
  const std::vector<std::string> own = {binary_,
                                        "--bind",
                                        options_.host,
                                        "--port",
                                        std::to_string(port_),
                                        "--dir",
                                        options_.data_dir.empty() ? dir_ : options_.data_dir,
                                        "--logfile",
                                        dir_ + "/server.log",
                                        "--save",
                                        "",
                                        "--daemonize",
                                        "no",
                                        "--protected-mode",
                                        protect,
                                        "--appendonly",
                                        options_.appendonly ? "yes" : "no"};
  const std::size_t binary_at = args.size();
  args.insert(args.end(), own.begin(), own.end());
  if (options_.appendonly) {
    args.emplace_back("--appendfsync");
    args.emplace_back(*options_.appendonly == RedisServerOptions::Fsync::kAlways ? "always"
                                                                                 : "everysec");
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  if (!options_.config_lines.empty()) {
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(binary_at) + 1, conf);
  }
  if (const int err = process_.spawn(std::move(args), dir_ + "/stdout.log", dir_); err != 0) {
    fail("cannot run " + binary_ + ": " + std::strerror(err) +
         " (install it with `apt-get install -y redis-server`)");
  }

  const auto deadline = Clock::now() + kStartTimeout;
  while (Clock::now() < deadline) {
    if (!alive()) {
      if (log_tail(50).find("Address already in use") != std::string::npos) fail(in_use(port_));
      fail("redis-server exited during start-up");
    }
    if (answers_ping(port_, options_.host)) return;
    std::this_thread::sleep_for(kPollInterval);
  }
  fail("redis-server did not answer PING within 10 s");
}

std::string RedisServer::url() const {
  return "redis://" + options_.host + ":" + std::to_string(port_);
}

std::string RedisServer::log_tail(std::size_t n) const { return logs_tail(dir_, n); }

bool RedisServer::alive() { return process_.alive(); }

void RedisServer::kill9() { process_.kill9(); }

std::string RedisServer::repair_restart() {
  stop();
  const std::string data = options_.data_dir.empty() ? dir_ : options_.data_dir;
  std::string manifest;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(data + "/appendonlydir", ec)) {
    if (e.path().string().ends_with(".manifest")) manifest = e.path().string();
  }
  if (manifest.empty()) throw TargetFailure("redis: no AOF manifest in " + data + " to repair");
  std::string check = std::filesystem::path(binary_).parent_path().string() + "/redis-check-aof";
  if (!std::filesystem::exists(check)) check = "redis-check-aof";  // on PATH, then
  // It asks "Continue? [y/N]" before it truncates; the paths are the fixture's own.
  const std::string command = "printf 'y\\n' | '" + check + "' --fix '" + manifest + "' 2>&1";
  std::string said;
  FILE* out = ::popen(command.c_str(), "r");
  if (out == nullptr) throw TargetFailure("redis: cannot run " + check);
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, out) != nullptr) said += buffer;
  const int status = ::pclose(out);
  std::string last;  // the last non-empty line: what it concluded
  for (std::size_t from = 0; from < said.size();) {
    const std::size_t end = std::min(said.find('\n', from), said.size());
    if (end > from) last = said.substr(from, end - from);
    from = end + 1;
  }
  if (status != 0) {
    throw TargetFailure("redis-check-aof --fix could not repair " + manifest + ": " + last);
  }
  start();
  return "redis-check-aof --fix: " + last;
}

void RedisServer::restart() {
  stop();
  start();
}

void RedisServer::stop() { process_.stop(kStopTimeout); }

void RedisServer::fail(const std::string& what) {
  const std::string msg = failure_line(what, binary_, port_, dir_);
  stop();
  throw TargetFailure(msg);
}

void RedisServer::pause() { process_.pause(); }

void RedisServer::resume() { process_.resume(); }

}  // namespace conformance
