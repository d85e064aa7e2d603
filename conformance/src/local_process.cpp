// The server fixtures' shared process handling (conformance/local_process.h).
#include "conformance/local_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "conformance/target.h"

namespace conformance {

namespace {

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

}  // namespace

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw TargetFailure(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
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

bool accepts_connection(int port, const std::string& host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return false;
  }
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string find_server_binary(const char* env_var, const std::string& name,
                               const std::vector<std::string>& dirs) {
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') {
    return executable(env) ? std::string(env) : std::string();
  }
  std::vector<std::string> all;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    const std::string p(path);
    std::size_t start = 0;
    while (start <= p.size()) {
      const std::size_t colon = p.find(':', start);
      const std::size_t end = colon == std::string::npos ? p.size() : colon;
      if (end > start) all.push_back(p.substr(start, end - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  all.insert(all.end(), dirs.begin(), dirs.end());
  for (const std::string& d : all) {
    const std::string candidate = d + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return {};
}

std::string make_temp_dir(const std::string& what) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  const std::string templ = base + "/conformance-" + what + "-XXXXXX";
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

std::string logs_tail(const std::string& dir, std::size_t n) {
  std::deque<std::string> lines;
  tail_of(dir + "/server.log", n, lines);
  std::deque<std::string> out;
  tail_of(dir + "/stdout.log", n, out);
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  if (!out.empty()) {
    text += "-- stdout/stderr --\n";
    for (const std::string& l : out) text += l + "\n";
  }
  return text;
}

std::string failure_line(const std::string& what, const std::string& binary, int port,
                         const std::string& dir) {
  std::deque<std::string> last;
  tail_of(dir + "/server.log", 1, last);
  if (last.empty()) tail_of(dir + "/stdout.log", 1, last);
  std::string msg = what + " (" + binary + " on 127.0.0.1:" + std::to_string(port) + ")";
  if (!last.empty()) msg += "; its log ends: " + last.back();
  return msg;
}

int LocalProcess::spawn(std::vector<std::string> args, const std::string& out,
                        const std::string& dir, const std::string& unmount,
                        std::vector<std::string> cleanup) {
  return start(std::move(args), out, dir, unmount, std::move(cleanup), -1, -1);
}

int LocalProcess::spawn_piped(std::vector<std::string> args, const std::string& err,
                              const std::string& dir, int& to_child, int& from_child) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0)
    throw TargetFailure(std::string("pipe2: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(in[0]);
    ::close(in[1]);
    throw TargetFailure(std::string("pipe2: ") + std::strerror(e));
  }
  int started = 0;
  try {
    started = start(std::move(args), err, dir, "", {}, in[0], out[1]);
  } catch (...) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    throw;
  }
  ::close(in[0]);
  ::close(out[1]);
  if (started != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return started;
  }
  to_child = in[1];
  from_child = out[0];
  return 0;
}

int LocalProcess::start(std::vector<std::string> args, const std::string& out,
                        const std::string& dir, const std::string& unmount,
                        std::vector<std::string> cleanup, int stdin_fd, int stdout_fd) {
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> rm_args = {"/bin/rm", "-rf", "--", dir};
  std::vector<char*> rm_argv;
  for (std::string& a : rm_args) rm_argv.push_back(a.data());
  rm_argv.push_back(nullptr);
  std::vector<char*> cleanup_argv;
  for (std::string& a : cleanup) cleanup_argv.push_back(a.data());
  cleanup_argv.push_back(nullptr);
  const pid_t tool = ::getpid();
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
    // A watchdog in the server's process group: when the tool dies (even by SIGKILL, which
    // runs no destructor) it leaves the group, kills it, waits (bounded) until no member is
    // left, and becomes `rm -rf dir`: no server and no directory outlive the tool. stop()
    // and kill9() kill the group while the watchdog is in it. (PR_SET_PDEATHSIG would follow
    // the thread that forked, not the process.) Only async-signal-safe calls after fork.
    if (::fork() == 0) {
      ::close_range(0, ~0U, 0);  // holds nothing: not the exec pipe, no socket, no file
      const pid_t group = ::getpgrp();
      const struct timespec second { 1, 0 };
      while (::kill(tool, 0) == 0 || errno == EPERM) ::nanosleep(&second, nullptr);
      ::setpgid(0, 0);
      ::kill(-group, SIGKILL);
      const struct timespec tick { 0, 50000000 };
      for (int i = 0; i < 200 && ::kill(-group, 0) == 0; ++i) ::nanosleep(&tick, nullptr);
      if (!unmount.empty()) ::umount2(unmount.c_str(), MNT_DETACH);
      if (cleanup_argv.size() > 1) ::execv(cleanup_argv[0], cleanup_argv.data());
      if (!dir.empty()) ::execv(rm_argv[0], rm_argv.data());
      ::_exit(0);
    }
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (stdin_fd >= 0) {
      ::dup2(stdin_fd, STDIN_FILENO);
    } else if (const int devnull = ::open("/dev/null", O_RDONLY); devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
    }
    if (stdout_fd >= 0) {
      ::dup2(stdout_fd, STDOUT_FILENO);
    } else if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
    }
    if (fd >= 0) ::dup2(fd, STDERR_FILENO);
    ::signal(SIGPIPE, SIG_DFL);  // a kit that ignores it (exec_target.cpp) does not pass that on
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
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return exec_errno;
  }
  return 0;
}

bool LocalProcess::alive() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
  return !reaped_;
}

void LocalProcess::kill9() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

void LocalProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGTERM);
  ::kill(-pid_, SIGCONT);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!alive()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill9();
}

void LocalProcess::pause() {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, SIGSTOP);
}

void LocalProcess::resume() {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, SIGCONT);
}

}  // namespace conformance
