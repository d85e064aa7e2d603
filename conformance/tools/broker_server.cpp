// broker_server: the in-process broker's durable mode in a process of its own, so the
// conformance kit's fault workload can kill it with SIGKILL and start it again on the same
// directory (conformance/broker_server.h starts it; conformance/served_target.h talks to it).
//
//   broker_server --dir DIR --port PORT [--sync always|MS] [--repair]
//
// Opens a durable broker::Broker on DIR (the real file system; --sync: publishes and commits
// synced before each call returns, or by a flusher at least every MS milliseconds; --repair:
// recovery cuts what is damaged instead of refusing with CorruptLog, SPEC R21, and each cut
// is said on stdout as "broker_server: recovery cut N bytes of FILE at POS (REASON)"), listens
// on 127.0.0.1:PORT and serves one connection at a time with the line protocol of
// conformance/broker_wire.h. The broker's clock is real time since the process started: before
// each op the runner's clock is advanced to it and what passed its ack deadline is expired
// (SPEC R11), so held messages come back as on any server.
// Exit: 0 on SIGTERM (the broker closed cleanly), 1 if the directory cannot be opened or
// the port cannot be bound (one line on stderr), 2 bad usage.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <variant>

#include "conformance/broker_wire.h"
#include "harness/broker_runner.h"
#include "oplang/text.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_term(int) { g_stop = 1; }

constexpr const char* kHelp =
    "usage: broker_server --dir DIR --port PORT [--sync always|MS] [--repair]\n"
    "       broker_server --help\n"
    "\n"
    "Serves a durable broker on DIR at 127.0.0.1:PORT, one connection at a time, with the\n"
    "conformance kit's line protocol (conformance/broker_wire.h); SIGTERM closes it cleanly.\n"
    "  --dir DIR      the storage directory (required; made if missing)\n"
    "  --port PORT    the loopback port to listen on (required)\n"
    "  --sync P       always (default): publishes and commits synced before each call\n"
    "                 returns; MS: a flusher syncs at least every MS milliseconds\n"
    "  --repair       recovery cuts damaged records instead of refusing (SPEC R21) and says\n"
    "                 each cut on stdout (\"broker_server: recovery cut ...\"); default off\n"
    "  --help, -h     this text\n"
    "\n"
    "Exit status:\n"
    "  0  closed cleanly on SIGTERM (or --help)\n"
    "  1  DIR cannot be opened (CorruptLog without --repair, say) or PORT cannot be bound\n"
    "  2  bad usage\n";

int usage(const std::string& why) {
  std::cerr << "broker_server: " << why
            << "\nusage: broker_server --dir DIR --port PORT [--sync always|MS] [--repair]"
               " (broker_server --help says more)\n";
  return 2;
}

// Reads one line (without its newline) from fd into line; false at EOF, on an error or when
// asked to stop. `buffered` keeps what came after the line.
bool read_line(int fd, std::string& buffered, std::string& line) {
  for (;;) {
    if (const std::size_t nl = buffered.find('\n'); nl != std::string::npos) {
      line = buffered.substr(0, nl);
      buffered.erase(0, nl + 1);
      return true;
    }
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR && !g_stop) continue;
    if (n <= 0) return false;
    buffered.append(buf, static_cast<std::size_t>(n));
  }
}

bool write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// One op line to its reply line; restart and crash are the fixture's (it owns the process).
std::string serve(harness::BrokerRunner& runner, const std::string& line,
                  std::chrono::steady_clock::time_point start, model::Millis& clock) {
  try {
    const oplang::Script script = oplang::parse(line);
    if (script.size() != 1) return conformance::encode_failure("one op per line");
    const oplang::Op& op = script.front();
    if (std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op) ||
        std::holds_alternative<oplang::Advance>(op)) {
      return conformance::encode_failure("restart, crash and advance are not served: " + line);
    }
    const model::Millis now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
    if (now > clock) {
      const oplang::Outcome moved = runner.step(oplang::Advance{now - clock});
      if (moved.error) return conformance::encode_failure("advance refused");
      clock = now;
      // A failed expire (the store failed, R33) fails the op that follows too: it says so.
      (void)runner.step(oplang::Expire{});
    }
    return conformance::encode_reply(runner.step(op));
  } catch (const std::exception& e) {
    return conformance::encode_failure(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  int port = 0;
  harness::DurableSetup setup;
  // Segments and the journal roll and compact every few hundred messages: the kills land
  // in those paths too.
  setup.segment_bytes = 64 << 10;
  setup.journal_compact_bytes = 64 << 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kHelp;
      return 0;
    }
    if (a == "--repair") {  // R21: cut what is damaged, and say what, instead of refusing
      setup.repair = true;
      continue;
    }
    if (i + 1 >= argc) return usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--dir") {
      dir = v;
    } else if (a == "--port") {
      port = std::atoi(v.c_str());
    } else if (a == "--sync") {
      if (v != "always") {
        const long ms = std::strtol(v.c_str(), nullptr, 10);
        if (ms <= 0) return usage("--sync is always or a number of milliseconds, not " + v);
        setup.publish_sync = broker::FsyncPolicy::every(broker::Millis{ms});
        setup.commit_sync = setup.publish_sync;
      }
    } else {
      return usage("unknown option " + a);
    }
  }
  if (dir.empty() || port <= 0 || port > 65535) return usage("--dir and --port are required");
  setup.directory = dir;

  struct sigaction sa {};
  sa.sa_handler = on_term;  // no SA_RESTART: accept and read return EINTR
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  std::unique_ptr<harness::BrokerRunner> runner;
  try {
    runner = std::make_unique<harness::BrokerRunner>(setup);
  } catch (const std::exception& e) {
    std::cerr << "broker_server: cannot open " << dir << ": " << e.what() << "\n";
    return 1;
  }
  for (const broker::Truncation& t : runner->broker().recovery().truncations) {
    std::cout << "broker_server: recovery cut " << t.bytes << " bytes of " << t.file << " at "
              << t.position << " (" << t.reason << ")" << std::endl;
  }
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 8) != 0) {
    std::cerr << "broker_server: cannot listen on 127.0.0.1:" << port << ": "
              << std::strerror(errno) << "\n";
    return 1;
  }
  std::cout << "broker_server: serving " << dir << " on 127.0.0.1:" << port << std::endl;

  const auto start = std::chrono::steady_clock::now();
  model::Millis clock = 0;
  while (!g_stop) {
    const int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;  // EINTR (then g_stop decides) or a connection reset
    std::string buffered, line;
    while (!g_stop && read_line(conn, buffered, line)) {
      if (!write_all(conn, serve(*runner, line, start, clock) + "\n")) break;
    }
    ::close(conn);
  }
  ::close(listener);
  runner.reset();  // a clean close: the broker syncs what it holds
  return 0;
}
