// A real nats-server with JetStream for the conformance kit: one private server per fixture,
// on a free loopback port, with its store and log in a fresh temporary directory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "conformance/local_process.h"

namespace conformance {

/// Whether a client can connect to url and JetStream answers an account-info request
/// (within ~1 s). Throws nothing.
bool jetstream_answers(const std::string& url);

/// How a NatsServer is started: on a free port (0) or this one, with extra command-line
/// arguments (a cluster's name, routes), and whether start-up waits for JetStream to answer
/// (a cluster node's JetStream answers only once a quorum of nodes runs).
struct NatsServerOptions {
  int port = 0;
  std::vector<std::string> extra_args;
  bool wait_for_jetstream = true;
  /// Where JetStream keeps its store; "" for DIR/store (a lazy file system's mount, say).
  std::string store_dir;
  /// The address it listens on and clients use (a network namespace's, say).
  std::string host = "127.0.0.1";
  /// What the server's command line is run under ({"ip", "netns", "exec", NAME}, say).
  std::vector<std::string> exec_prefix;
};

/// Starts `nats-server -js -a 127.0.0.1 -p PORT -sd DIR/store -l DIR/server.log` in its own
/// process group and waits (at most ~10 s) until it accepts connections and JetStream
/// answers; throws TargetFailure (saying what to install, which port, and the log's tail)
/// otherwise. The binary is $NATS_SERVER_BIN if set, else nats-server on PATH, /usr/sbin or
/// /usr/local/{s,}bin. Only ever listens on 127.0.0.1. The destructor stops the server
/// (SIGTERM, ~5 s, then SIGKILL) and removes the directory.
class NatsServer {
 public:
  explicit NatsServer(NatsServerOptions options = {});
  ~NatsServer();
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  /// "nats://127.0.0.1:PORT".
  [[nodiscard]] std::string url() const;
  [[nodiscard]] int port() const { return port_; }
  /// The temporary directory (store and log).
  [[nodiscard]] const std::string& dir() const { return dir_; }
  /// The last n lines of the server's log (and of its captured stdout/stderr).
  [[nodiscard]] std::string log_tail(std::size_t n = 20) const;
  /// Whether the server process is still running.
  [[nodiscard]] bool alive();
  /// Kills the server at once (SIGKILL, reaped): a server that dies under a run, with
  /// whatever its store had written.
  void kill9();
  void kill() { kill9(); }
  /// Stops the server if it runs (SIGTERM, then SIGKILL after ~5 s) and starts it again on
  /// the same port and store directory, waiting until JetStream answers. Throws
  /// TargetFailure (the log's tail) if it does not come back within ~10 s; the directory
  /// stays until the destructor.
  void restart();
  /// Stops the server if it runs (SIGTERM: a clean shutdown, then SIGKILL after ~5 s); it
  /// stays down until restart().
  void stop();
  /// Pauses the server (SIGSTOP): connections stay open and nothing is answered.
  void pause();
  /// Resumes a paused server (SIGCONT).
  void resume();

 private:
  // Forks and execs the server and waits until JetStream answers; on failure stops what it
  // started and throws (the directory is left to the caller).
  void start();
  [[noreturn]] void fail(const std::string& what);

  NatsServerOptions options_;
  int port_ = 0;
  std::string dir_;
  std::string binary_;
  LocalProcess process_;
};

}  // namespace conformance
