// The nats-server fixture: free port, temporary directory, fork/exec, readiness, teardown.
#include "conformance/nats_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>
#include <vector>

#include "conformance/target.h"
#include "jetstream_probe.h"

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(5);
constexpr auto kPollInterval = std::chrono::milliseconds(25);

}  // namespace

// Whether a client can connect and JetStream answers an account-info request.
bool jetstream_answers(const std::string& url) {
  const JetStreamProbe probe(url, 1000);
  jsAccountInfo* info = nullptr;
  const bool ok = probe.ok() && js_GetAccountInfo(&info, probe.js(), nullptr, nullptr) == NATS_OK;
  jsAccountInfo_Destroy(info);
  return ok;
}

NatsServer::NatsServer(NatsServerOptions options) : options_(std::move(options)) {
  binary_ = find_server_binary("NATS_SERVER_BIN", "nats-server",
                               {"/usr/sbin", "/usr/local/sbin", "/usr/local/bin", "/usr/bin"});
  if (binary_.empty()) {
    throw TargetFailure(
        "nats-server not found (looked at $NATS_SERVER_BIN, PATH, /usr/sbin, /usr/local/sbin, "
        "/usr/local/bin): install it with `apt-get install -y nats-server`");
  }
  port_ = options_.port != 0 ? options_.port : free_loopback_port();
  dir_ = make_temp_dir("nats");
  try {
    start();
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

void NatsServer::start() {
  const std::string store = options_.store_dir.empty() ? dir_ + "/store" : options_.store_dir;
  const std::string log = dir_ + "/server.log";
  std::vector<std::string> args = options_.exec_prefix;
  args.insert(args.end(), {binary_, "-js", "-a", options_.host, "-p", std::to_string(port_), "-sd",
                           store, "-l", log});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  if (const int err = process_.spawn(std::move(args), dir_ + "/stdout.log", dir_); err != 0) {
    fail("cannot run " + binary_ + ": " + std::strerror(err) +
         " (install it with `apt-get install -y nats-server`)");
  }

  const auto deadline = Clock::now() + kStartTimeout;
  bool tcp = false;
  while (Clock::now() < deadline) {
    if (!alive()) fail("nats-server exited during start-up");
    if (!tcp) tcp = accepts_connection(port_, options_.host);
    if (tcp && (!options_.wait_for_jetstream || jetstream_answers(url()))) return;
    std::this_thread::sleep_for(kPollInterval);
  }
  fail(tcp ? "JetStream did not answer within 10 s" : "no connection accepted within 10 s");
}

void NatsServer::restart() {
  stop();
  start();
}

NatsServer::~NatsServer() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string NatsServer::url() const {
  return "nats://" + options_.host + ":" + std::to_string(port_);
}

std::string NatsServer::log_tail(std::size_t n) const { return logs_tail(dir_, n); }

bool NatsServer::alive() { return process_.alive(); }

void NatsServer::kill9() { process_.kill9(); }

void NatsServer::stop() { process_.stop(kStopTimeout); }

void NatsServer::pause() { process_.pause(); }

void NatsServer::resume() { process_.resume(); }

void NatsServer::fail(const std::string& what) {
  const std::string msg = failure_line(what, binary_, port_, dir_);
  stop();
  throw TargetFailure(msg);
}

}  // namespace conformance
