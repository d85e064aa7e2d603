// The client of a served broker (conformance/served_target.h).
#include "conformance/served_target.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <variant>

#include "conformance/broker_wire.h"
#include "oplang/text.h"

namespace conformance {

namespace {

// A reply later than this means the server is gone or stuck: the step fails (indeterminate).
constexpr timeval kReplyTimeout{5, 0};

bool served(const oplang::Op& op) {
  return std::holds_alternative<oplang::CreateTopic>(op) ||
         std::holds_alternative<oplang::DeleteTopic>(op) ||
         std::holds_alternative<oplang::Publish>(op) ||
         std::holds_alternative<oplang::SubscribePull>(op) ||
         std::holds_alternative<oplang::Unsubscribe>(op) ||
         std::holds_alternative<oplang::Poll>(op) || std::holds_alternative<oplang::Ack>(op) ||
         std::holds_alternative<oplang::Nack>(op) || std::holds_alternative<oplang::Term>(op);
}

}  // namespace

ServedTarget::ServedTarget(int port) : port_(port) {}

ServedTarget::~ServedTarget() { drop(); }

void ServedTarget::drop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffered_.clear();
}

void ServedTarget::lost(const std::string& what) {
  const std::string why = what + ": " + std::strerror(errno);
  drop();
  throw TargetFailure("served broker on 127.0.0.1:" + std::to_string(port_) + ": " + why);
}

void ServedTarget::connect() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) lost("socket");
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &kReplyTimeout, sizeof kReplyTimeout);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &kReplyTimeout, sizeof kReplyTimeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port_));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) lost("connect");
}

oplang::Outcome ServedTarget::step(const oplang::Op& op) {
  if (!served(op)) throw std::invalid_argument("not served: " + oplang::print(op));
  if (fd_ < 0) connect();
  const std::string request = oplang::print(op) + "\n";
  for (std::size_t done = 0; done < request.size();) {
    const ssize_t n = ::send(fd_, request.data() + done, request.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) lost("send");
    done += static_cast<std::size_t>(n);
  }
  for (;;) {
    if (const std::size_t nl = buffered_.find('\n'); nl != std::string::npos) {
      const std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return decode_reply(line);
    }
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = ECONNRESET;
    if (n <= 0) lost("no reply");
    buffered_.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace conformance
