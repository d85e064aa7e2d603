// What the kit's server fixtures (nats_server.h, redis_server.h) share: a free loopback
// port, the server binary, a temporary directory, and one child process in its own
// process group that can be started, killed, stopped and waited for.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace conformance {

/// A port the kernel just handed out on 127.0.0.1 (closed again: a server binds it next).
/// Throws TargetFailure.
int free_loopback_port();
/// Whether something accepts a TCP connection on host:port now (an IPv4 address; closed at
/// once).
bool accepts_connection(int port, const std::string& host = "127.0.0.1");
/// $`env_var` if set (the path, or "" if it is not executable), else `name` on PATH, else
/// in `dirs` in order ("" if none).
std::string find_server_binary(const char* env_var, const std::string& name,
                               const std::vector<std::string>& dirs);
/// A fresh directory $TMPDIR/conformance-`what`-XXXXXX (/tmp without TMPDIR). Throws
/// TargetFailure.
std::string make_temp_dir(const std::string& what);
/// Appends the last n non-empty lines of the file at path to lines (none if unreadable).
void tail_of(const std::string& path, std::size_t n, std::deque<std::string>& lines);
/// A fixture's logs in dir: the last n lines of server.log, then (after a "-- stdout/stderr
/// --" line, if any) the last n of stdout.log, where LocalProcess::spawn sent the output.
std::string logs_tail(const std::string& dir, std::size_t n);
/// The one-line failure of a fixture: what went wrong, the binary, the port, and the last
/// line of its logs in dir (server.log, else stdout.log), which usually says why.
std::string failure_line(const std::string& what, const std::string& binary, int port,
                         const std::string& dir);

/// One server process in a process group of its own, so a kill reaches everything it
/// started. Not thread-safe; the destructor does not stop it (its owner does, with stop()).
class LocalProcess {
 public:
  /// Forks and execs args[0] with args, stdin from /dev/null and stdout and stderr
  /// appended to `out`. Returns 0, or the errno of an exec that failed (then nothing runs).
  /// If the tool that called spawn dies without stopping the process (even by SIGKILL), a
  /// watchdog kills the process group within about a second and then removes `dir` (if not
  /// empty), after detaching the mount at `unmount` (if not empty: a file system the process
  /// served): no server, mount or directory outlives the tool. Throws TargetFailure if it
  /// cannot fork.
  /// With `cleanup` (a command line), the watchdog runs it instead of removing `dir`.
  int spawn(std::vector<std::string> args, const std::string& out, const std::string& dir = "",
            const std::string& unmount = "", std::vector<std::string> cleanup = {});
  /// As spawn, but the child's stdin and stdout are pipes: `to_child` (written by the
  /// caller) and `from_child` (read by it), both close-on-exec, the caller's to close; its
  /// stderr goes to `err`. Returns 0 (the fds are set), or the errno of an exec that failed.
  int spawn_piped(std::vector<std::string> args, const std::string& err, const std::string& dir,
                  int& to_child, int& from_child);
  /// Whether the process runs (reaps it if it has exited).
  [[nodiscard]] bool alive();
  /// SIGKILL to its group, then waits for it: a crash.
  void kill9();
  /// SIGTERM to its group (and SIGCONT, so a paused one hears it); SIGKILL if it still runs
  /// after `grace`.
  void stop(std::chrono::milliseconds grace);
  /// SIGSTOP to its group: the process keeps its sockets and answers nothing until resume().
  void pause();
  /// SIGCONT to its group.
  void resume();

 private:
  int start(std::vector<std::string> args, const std::string& out, const std::string& dir,
            const std::string& unmount, std::vector<std::string> cleanup, int stdin_fd,
            int stdout_fd);

  pid_t pid_ = -1;
  bool reaped_ = true;
};

}  // namespace conformance
