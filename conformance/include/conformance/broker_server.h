// The in-process broker's durable mode as a server the fault workload can kill: one
// broker_server process (conformance/tools/broker_server.cpp) per fixture, on a loopback
// port, with its storage directory in a fresh temporary directory.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "conformance/local_process.h"

namespace conformance {

/// How the served broker syncs its publishes and commits: before each call returns, or by a
/// flusher at least every `interval_ms` (FsyncPolicy::every).
struct BrokerServerOptions {
  bool sync_always = true;
  long interval_ms = 1000;
  /// Where the broker keeps its storage; "" for DIR/store (a lazy file system's mount, say).
  std::string store_dir;
};

/// Starts `broker_server --dir DIR/store --port PORT --sync ...` in its own process group
/// and waits (at most ~10 s) until it accepts a connection; throws TargetFailure with one
/// line otherwise (the binary missing, the port in use, the storage that did not open, with
/// its log's last line). The binary is $BROKER_SERVER_BIN if set, else broker_server next to
/// the running program, else the one this build made. Only ever listens on 127.0.0.1. The
/// destructor stops the server (SIGTERM, ~5 s, then SIGKILL) and removes the directory.
/// Not thread-safe.
class BrokerServer {
 public:
  explicit BrokerServer(BrokerServerOptions options = {});
  ~BrokerServer();
  BrokerServer(const BrokerServer&) = delete;
  BrokerServer& operator=(const BrokerServer&) = delete;

  [[nodiscard]] int port() const { return port_; }
  /// "aloc://127.0.0.1:PORT".
  [[nodiscard]] std::string url() const;
  /// The temporary directory (the storage in store/, the server's output in stdout.log).
  [[nodiscard]] const std::string& dir() const { return dir_; }
  /// Whether the server process is still running.
  [[nodiscard]] bool alive();
  /// Kills the server at once (SIGKILL, reaped): a crash, with whatever the files hold.
  void kill9();
  /// Pauses the server (SIGSTOP): connections stay open and nothing is answered.
  void pause();
  /// Resumes a paused server (SIGCONT).
  void resume();
  /// Stops the server if it runs (SIGTERM: a clean close) and starts it again on the same
  /// port and directory, waiting until it serves (recovery done). Throws TargetFailure (one
  /// line) if it does not come back within ~10 s; the directory stays.
  void restart();
  /// After damage it refused to open (CorruptLog, SPEC R21): stops it if it runs and starts
  /// it again with --repair, which cuts what is damaged; returns what recovery said it cut
  /// (its "recovery cut" lines, "" if none). Throws TargetFailure as restart() does.
  std::string repair_restart();
  /// Stops the server if it runs (SIGTERM: the broker closes cleanly, then SIGKILL after
  /// ~5 s); it stays down until restart().
  void stop();

 private:
  void start(bool repair = false);
  [[noreturn]] void fail(const std::string& what);

  BrokerServerOptions options_;
  int port_ = 0;
  std::string dir_;
  std::string binary_;
  LocalProcess process_;
};

}  // namespace conformance
