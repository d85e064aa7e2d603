// The rabbitmq-server fixture: loopback ports, a private node and port mapper, readiness,
// teardown (conformance/rabbitmq_server.h).
#include "conformance/rabbitmq_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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

constexpr auto kStartTimeout = std::chrono::seconds(60);
constexpr auto kStopTimeout = std::chrono::seconds(10);

}  // namespace

std::vector<std::string> rabbitmq_adapter_command(const std::string& amqp_url) {
  const std::string python =
      std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  return {python, RABBITMQ_ADAPTER, "--url", amqp_url};
}

RabbitMqServer::RabbitMqServer() {
  binary_ = find_server_binary("RABBITMQ_SERVER_BIN", "rabbitmq-server", {"/usr/lib/rabbitmq/bin"});
  // Debian's /usr/sbin/rabbitmq-server switches to the rabbitmq user and its /etc config:
  // the node of a fixture runs the script the package keeps behind it.
  if (binary_ == "/usr/sbin/rabbitmq-server" &&
      std::filesystem::exists("/usr/lib/rabbitmq/bin/rabbitmq-server")) {
    binary_ = "/usr/lib/rabbitmq/bin/rabbitmq-server";
  }
  if (binary_.empty()) {
    throw TargetFailure(
        "rabbitmq-server not found (looked at $RABBITMQ_SERVER_BIN, PATH, /usr/lib/rabbitmq/bin): "
        "install it with `apt-get install -y rabbitmq-server`");
  }
  static std::atomic<int> counter{0};
  node_ = "aloc" + std::to_string(::getpid()) + "_" + std::to_string(++counter) + "@localhost";
  port_ = free_loopback_port();
  epmd_port_ = free_loopback_port();
  dist_port_ = free_loopback_port();
  dir_ = make_temp_dir("rabbitmq");
  try {
    std::ofstream(dir_ + "/rabbitmq.conf") << "listeners.tcp.default = 127.0.0.1:" << port_ << "\n";
    std::ofstream(dir_ + "/enabled_plugins") << "[].\n";
    // The node's own cookie: no other node on the machine can join or control it.
    const std::string cookie = dir_ + "/.erlang.cookie";
    std::ofstream(cookie) << "ALOC" << ::getpid() << "C" << counter.load() << "K"
                          << Clock::now().time_since_epoch().count();
    ::chmod(cookie.c_str(), 0400);
    const std::string epmd = find_server_binary("EPMD_BIN", "epmd", {"/usr/bin"});
    if (epmd.empty())
      throw TargetFailure("epmd not found: install it with `apt-get install -y erlang-base`");
    if (const int err =
            epmd_.spawn({epmd, "-port", std::to_string(epmd_port_), "-address", "127.0.0.1"},
                        dir_ + "/epmd.log");
        err != 0) {
      throw TargetFailure("cannot run " + epmd + ": " + std::strerror(err));
    }
    start();
  } catch (...) {
    epmd_.stop(kStopTimeout);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

RabbitMqServer::~RabbitMqServer() {
  stop();
  epmd_.stop(kStopTimeout);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void RabbitMqServer::start() {
  const std::string erl_args =
      "-kernel inet_dist_use_interface {127,0,0,1} -kernel inet_dist_listen_min " +
      std::to_string(dist_port_) + " -kernel inet_dist_listen_max " + std::to_string(dist_port_);
  std::vector<std::string> args = {
      "/usr/bin/env", "HOME=" + dir_, "RABBITMQ_NODENAME=" + node_,
      "RABBITMQ_CONFIG_FILE=" + dir_ + "/rabbitmq",
      "RABBITMQ_ENABLED_PLUGINS_FILE=" + dir_ + "/enabled_plugins",
      "RABBITMQ_MNESIA_BASE=" + dir_ + "/mnesia", "RABBITMQ_LOG_BASE=" + dir_ + "/log",
      "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1", "RABBITMQ_NODE_PORT=" + std::to_string(port_),
      // Else AMQP's port + 20000, which may pass 65535.
      "RABBITMQ_DIST_PORT=" + std::to_string(dist_port_),
      "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=" + erl_args, "ERL_EPMD_ADDRESS=127.0.0.1",
      // A node that dies in start-up writes its dump here, not in the caller's directory.
      "ERL_CRASH_DUMP=" + dir_ + "/erl_crash.dump", "ERL_EPMD_PORT=" + std::to_string(epmd_port_),
      binary_};
  if (const int err = process_.spawn(std::move(args), dir_ + "/stdout.log", dir_); err != 0) {
    fail(std::string("cannot run /usr/bin/env: ") + std::strerror(err));
  }
  const auto deadline = Clock::now() + kStartTimeout;
  while (Clock::now() < deadline) {
    if (!alive()) fail("rabbitmq-server exited during start-up");
    if (accepts_connection(port_)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fail("rabbitmq-server did not accept AMQP connections within 60 s");
}

void RabbitMqServer::stop() { process_.stop(kStopTimeout); }

void RabbitMqServer::restart() {
  stop();
  start();
}

void RabbitMqServer::kill9() { process_.kill9(); }

bool RabbitMqServer::alive() { return process_.alive(); }

std::string RabbitMqServer::url() const {
  return "amqp://guest:guest@127.0.0.1:" + std::to_string(port_) + "/%2F";
}

std::string RabbitMqServer::log_tail(std::size_t n) const {
  std::string text = logs_tail(dir_, n);
  std::deque<std::string> lines;
  tail_of(dir_ + "/log/" + node_ + ".log", n, lines);
  if (!lines.empty()) text += "-- " + node_ + ".log --\n";
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

void RabbitMqServer::fail(const std::string& what) {
  const std::string msg = failure_line(what, binary_, port_, dir_);
  stop();
  throw TargetFailure(msg);
}

}  // namespace conformance
