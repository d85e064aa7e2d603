// A real redis-server for the conformance kit: one private server per fixture, on a loopback
// port, with its data (and AOF, if asked) in a fresh temporary directory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/local_process.h"

namespace conformance {

/// How a RedisServer persists: no AOF (the default: data lives in memory only), or an
/// append-only file synced on every write or once a second. RDB snapshots are always off.
/// HOST and PORT of "redis://HOST:PORT" (a trailing '/' allowed). Throws
/// std::invalid_argument for anything else.
std::pair<std::string, int> redis_host_port(const std::string& url);
/// The sentinels (HOST, PORT) and the primary's name of "redis-sentinel://HOST:PORT,.../NAME".
/// Throws std::invalid_argument for another form.
std::pair<std::vector<std::pair<std::string, int>>, std::string> redis_sentinel_url(
    const std::string& url);

/// Whether the Redis server at url (redis://HOST:PORT) answers PING with PONG now (within
/// about a second). Throws nothing.
bool redis_answers(const std::string& url);

struct RedisServerOptions {
  enum class Fsync { kAlways, kEverySec };
  std::optional<Fsync> appendonly;
  /// 0: a free port the kernel hands out; otherwise this one (refused if it is in use).
  int port = 0;
  /// Where the data and AOF go (--dir); "" for DIR (a lazy file system's mount, say).
  std::string data_dir;
  /// The address it listens on (a network namespace's, conformance/net_namespaces.h); only
  /// loopback is checked for a port in use.
  std::string host = "127.0.0.1";
  /// What the server's command line starts with: {"ip", "netns", "exec", NAME} runs it in
  /// that namespace (NetNamespaces::exec_prefix).
  std::vector<std::string> exec_prefix;
  /// More command-line arguments.
  std::vector<std::string> extra_args;
  /// If not empty, these lines go to DIR/redis.conf, written once, which the server is
  /// started with: what it rewrites there (CONFIG REWRITE: the role a sentinel gave it) it
  /// keeps across restarts, as a deployment's config file does.
  std::vector<std::string> config_lines;
};

/// Starts `redis-server --bind HOST --port PORT --dir DIR --save "" --appendonly ...` in
/// its own process group and waits (at most ~10 s) until PING is answered; throws
/// TargetFailure with one line (the binary missing and what to install, the port in use,
/// or the server that did not come up and its log's last line) otherwise. The binary is
/// $REDIS_SERVER_BIN if set, else redis-server on PATH, /usr/bin or /usr/local/bin. Only
/// ever listens on HOST (127.0.0.1 unless the options name a namespace's address). The
/// destructor stops the server (SIGTERM, ~5 s, then SIGKILL) and removes the directory.
/// Not thread-safe.
class RedisServer {
 public:
  explicit RedisServer(RedisServerOptions options = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// "redis://HOST:PORT".
  [[nodiscard]] std::string url() const;
  /// The address it listens on.
  [[nodiscard]] const std::string& host() const { return options_.host; }
  [[nodiscard]] int port() const { return port_; }
  /// The temporary directory (data, AOF, log).
  [[nodiscard]] const std::string& dir() const { return dir_; }
  /// The last n lines of the server's log (and of its captured stdout/stderr).
  [[nodiscard]] std::string log_tail(std::size_t n = 20) const;
  /// Whether the server process is still running.
  [[nodiscard]] bool alive();
  /// Kills the server at once (SIGKILL, reaped): a crash, with whatever the AOF holds.
  void kill9();
  /// Pauses the server (SIGSTOP): connections stay open and nothing is answered.
  void pause();
  /// Resumes a paused server (SIGCONT).
  void resume();
  /// After damage it refused to load: stops it if it runs, runs Redis's own repair
  /// (`redis-check-aof --fix` on the AOF manifest, answering its question with yes) and
  /// starts it again; returns the repair's last words. Throws TargetFailure (one line: what
  /// the repair said) if there is no AOF, the repair fails, or the server does not come back.
  std::string repair_restart();
  /// Stops the server if it runs (SIGTERM, then SIGKILL after ~5 s) and starts it again on
  /// the same port and directory, waiting until it answers (the AOF loaded). Throws
  /// TargetFailure (one line) if it does not come back within ~10 s; the directory stays.
  void restart();
  /// Stops the server if it runs (SIGTERM: a clean shutdown, then SIGKILL after ~5 s); it
  /// stays down until restart().
  void stop();

 private:
  // Forks and execs the server and waits until PING is answered; on failure stops what it
  // started and throws (the directory is left to the caller).
  void start();
  [[noreturn]] void fail(const std::string& what);

  RedisServerOptions options_;
  int port_ = 0;
  std::string dir_;
  std::string binary_;
  LocalProcess process_;
};

}  // namespace conformance
