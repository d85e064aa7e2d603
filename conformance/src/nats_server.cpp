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

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(5);
constexpr auto kPollInterval = std::chrono::milliseconds(25);

bool accepts_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// $NATS_SERVER_BIN, else nats-server on PATH, else the usual sbin/bin folders ("" if none).
std::string find_binary() {
  if (const char* env = std::getenv("NATS_SERVER_BIN"); env != nullptr && *env != '\0') {
    return executable(env) ? std::string(env) : std::string();
  }
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string p(path);
    std::size_t start = 0;
    while (start <= p.size()) {
      const std::size_t colon = p.find(':', start);
      const std::size_t end = colon == std::string::npos ? p.size() : colon;
      if (end > start) dirs.push_back(p.substr(start, end - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  for (const char* d : {"/usr/sbin", "/usr/local/sbin", "/usr/local/bin", "/usr/bin"}) {
    dirs.emplace_back(d);
  }
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/nats-server";
    if (executable(candidate)) return candidate;
  }
  return {};
}

std::string make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  std::string templ = base + "/conformance-nats-XXXXXX";
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
    lines.push_back(line);
    if (lines.size() > n) lines.pop_front();
  }
}

}  // namespace

// A port the kernel just handed out on 127.0.0.1 (closed again: the server binds it next).
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

// Whether a client can connect and JetStream answers an account-info request.
bool jetstream_answers(const std::string& url) {
  natsOptions* opts = nullptr;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  jsAccountInfo* info = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, url.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 1000);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  if (s == NATS_OK) {
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 1000;
    s = natsConnection_JetStream(&js, nc, &jo);
  }
  if (s == NATS_OK) s = js_GetAccountInfo(&info, js, nullptr, nullptr);
  jsAccountInfo_Destroy(info);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  natsOptions_Destroy(opts);
  return s == NATS_OK;
}

NatsServer::NatsServer(NatsServerOptions options) : options_(std::move(options)) {
  binary_ = find_binary();
  if (binary_.empty()) {
    throw TargetFailure(
        "nats-server not found (looked at $NATS_SERVER_BIN, PATH, /usr/sbin, /usr/local/sbin, "
        "/usr/local/bin): install it with `apt-get install -y nats-server`");
  }
  port_ = options_.port != 0 ? options_.port : free_loopback_port();
  dir_ = make_temp_dir();
  try {
    start();
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

void NatsServer::start() {
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  const std::string port = std::to_string(port_);
  const std::string store = dir_ + "/store";
  const std::string log = dir_ + "/server.log";
  const std::string out = dir_ + "/stdout.log";
  std::vector<std::string> args = {binary_, "-js", "-a",  "127.0.0.1", "-p",
                                   port,    "-sd", store, "-l",        log};
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

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
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
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
    fail("cannot run " + binary_ + ": " + std::strerror(exec_errno) +
         " (install it with `apt-get install -y nats-server`)");
  }

  const auto deadline = Clock::now() + kStartTimeout;
  bool tcp = false;
  while (Clock::now() < deadline) {
    if (!alive()) fail("nats-server exited during start-up");
    if (!tcp) tcp = accepts_tcp(port_);
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

std::string NatsServer::url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

std::string NatsServer::log_tail(std::size_t n) const {
  std::deque<std::string> lines;
  tail_of(dir_ + "/server.log", n, lines);
  std::deque<std::string> out;
  tail_of(dir_ + "/stdout.log", n, out);
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  if (!out.empty()) {
    text += "-- stdout/stderr --\n";
    for (const std::string& l : out) text += l + "\n";
  }
  return text;
}

bool NatsServer::alive() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
  return !reaped_;
}

void NatsServer::kill9() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

void NatsServer::stop() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGTERM);
  const auto deadline = Clock::now() + kStopTimeout;
  while (Clock::now() < deadline) {
    if (!alive()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

void NatsServer::fail(const std::string& what) {
  std::string msg = what + " (" + binary_ + " on 127.0.0.1:" + std::to_string(port_) + ", dir " +
                    dir_ + ")\nlast lines of the server log:\n" + log_tail(20);
  stop();
  throw TargetFailure(msg);
}

}  // namespace conformance
