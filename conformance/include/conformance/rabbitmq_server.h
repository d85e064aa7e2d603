// A real rabbitmq-server for the conformance kit: one private node per fixture, with its own
// node name, cookie, data directory and ports, every one of them on loopback.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "conformance/local_process.h"

namespace conformance {

/// The command that runs the kit's RabbitMQ adapter (conformance/adapters/rabbitmq, a target
/// protocol program in Python on Debian's python3-pika) against `amqp_url`: Debian's
/// /usr/bin/python3 where it exists (the one python3-pika installs into), else python3.
std::vector<std::string> rabbitmq_adapter_command(const std::string& amqp_url);

/// Starts an Erlang port mapper (`epmd -port E -address 127.0.0.1`, in the foreground, so
/// it dies with the fixture) and `rabbitmq-server` (Debian's /usr/lib/rabbitmq/bin, as the
/// calling user) with HOME, the cookie, mnesia and logs in a fresh temporary directory, the
/// node `aloc<pid>_<n>@localhost`, AMQP on 127.0.0.1:PORT, the distribution port bound to
/// 127.0.0.1, no plugins; then waits (at most ~60 s) until AMQP accepts a connection.
/// Throws TargetFailure with one line (the binary missing and what to install, or the node
/// that did not come up and its log's last line). The destructor stops both (SIGTERM, ~10 s,
/// then SIGKILL) and removes the directory; if the tool dies first, even by SIGKILL, the
/// watchdogs do. Not thread-safe.
class RabbitMqServer {
 public:
  RabbitMqServer();
  ~RabbitMqServer();
  RabbitMqServer(const RabbitMqServer&) = delete;
  RabbitMqServer& operator=(const RabbitMqServer&) = delete;

  /// "amqp://guest:guest@127.0.0.1:PORT/%2F".
  [[nodiscard]] std::string url() const;
  [[nodiscard]] int port() const { return port_; }
  /// The Erlang node name ("aloc123_1@localhost").
  [[nodiscard]] const std::string& node() const { return node_; }
  /// The temporary directory (HOME and its cookie, mnesia, logs).
  [[nodiscard]] const std::string& dir() const { return dir_; }
  /// The last n lines of the node's log and its captured stdout/stderr.
  [[nodiscard]] std::string log_tail(std::size_t n = 20) const;
  /// Whether the node's process is still running.
  [[nodiscard]] bool alive();
  /// SIGKILL to the node (reaped): a crash. The port mapper stays.
  void kill9();
  /// Stops the node if it runs and starts it again on the same directory and ports,
  /// waiting until AMQP accepts. Throws TargetFailure if it does not come back.
  void restart();

 private:
  void start();
  void stop();
  [[noreturn]] void fail(const std::string& what);

  std::string binary_;
  std::string node_;
  std::string dir_;
  int port_ = 0;
  int epmd_port_ = 0;
  int dist_port_ = 0;
  LocalProcess epmd_;
  LocalProcess process_;
};

}  // namespace conformance
