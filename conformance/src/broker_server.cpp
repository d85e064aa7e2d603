// The broker_server fixture: loopback port, temporary directory, fork/exec, readiness,
// crash and restart, teardown.
#include "conformance/broker_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <vector>

#include "conformance/target.h"

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(5);
constexpr auto kPollInterval = std::chrono::milliseconds(20);

// broker_server next to the running program (the conformance tool), if it is there.
std::string beside_this_program() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const auto candidate = self.parent_path() / "broker_server";
  return ::access(candidate.c_str(), X_OK) == 0 ? candidate.string() : std::string();
}

}  // namespace

BrokerServer::BrokerServer(BrokerServerOptions options) : options_(options) {
  binary_ = find_server_binary("BROKER_SERVER_BIN", "broker_server", {});
  if (binary_.empty() && std::getenv("BROKER_SERVER_BIN") == nullptr) {
    binary_ = beside_this_program();
#ifdef BROKER_SERVER_BUILT
    if (binary_.empty() && ::access(BROKER_SERVER_BUILT, X_OK) == 0) binary_ = BROKER_SERVER_BUILT;
#endif
  }
  if (binary_.empty()) {
    throw TargetFailure(
        "broker_server not found (looked at $BROKER_SERVER_BIN, PATH, beside this program and "
        "in the build): build it with `cmake --build --preset default --target broker_server`");
  }
  port_ = free_loopback_port();
  dir_ = make_temp_dir("broker");
  try {
    start();
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

BrokerServer::~BrokerServer() {
  process_.stop(kStopTimeout);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string BrokerServer::url() const { return "aloc://127.0.0.1:" + std::to_string(port_); }

bool BrokerServer::alive() { return process_.alive(); }

void BrokerServer::kill9() { process_.kill9(); }

void BrokerServer::stop() { process_.stop(kStopTimeout); }

void BrokerServer::restart() {
  stop();
  start();
}

std::string BrokerServer::repair_restart() {
  stop();
  const std::string out = dir_ + "/stdout.log";  // appended to: only this start's lines
  std::error_code ec;
  const std::uintmax_t before =
      std::filesystem::exists(out) ? std::filesystem::file_size(out, ec) : 0;
  start(true);
  std::ifstream log(out);
  log.seekg(static_cast<std::streamoff>(ec ? 0 : before));
  std::string said;
  for (std::string line; std::getline(log, line);) {
    if (line.starts_with("broker_server: recovery cut")) said += (said.empty() ? "" : "; ") + line;
  }
  return said;
}

void BrokerServer::start(bool repair) {
  std::vector<std::string> args = {
      binary_,
      "--dir",
      options_.store_dir.empty() ? dir_ + "/store" : options_.store_dir,
      "--port",
      std::to_string(port_),
      "--sync",
      options_.sync_always ? std::string("always") : std::to_string(options_.interval_ms)};
  if (repair) args.emplace_back("--repair");
  if (const int err = process_.spawn(std::move(args), dir_ + "/stdout.log", dir_); err != 0) {
    fail("cannot run " + binary_ + ": " + std::strerror(err));
  }
  const auto deadline = Clock::now() + kStartTimeout;
  while (Clock::now() < deadline) {
    if (!process_.alive()) fail("broker_server exited during start-up");
    if (accepts_connection(port_)) return;  // storage opened: it listens only then
    std::this_thread::sleep_for(kPollInterval);
  }
  fail("broker_server did not accept a connection within 10 s");
}

void BrokerServer::fail(const std::string& what) {
  const std::string msg = failure_line(what, binary_, port_, dir_);
  stop();
  throw TargetFailure(msg);
}

void BrokerServer::pause() { process_.pause(); }

void BrokerServer::resume() { process_.resume(); }

}  // namespace conformance
