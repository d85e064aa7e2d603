// A broker served by broker_server (conformance/broker_server.h) as a conformance target:
// each step is one request line and one reply line on a loopback connection
// (conformance/broker_wire.h).
#pragma once

#include <string>

#include "conformance/target.h"

namespace conformance {

/// The client of one broker_server. The connection is made at the first step and again at
/// the next step after it was lost (a killed server), so a run goes on across restarts; a
/// step whose connection fails, or whose reply does not come within ~5 s, throws
/// TargetFailure (the op may or may not have happened). Pull only: create_topic,
/// delete_topic, publish, subscribe_pull, unsubscribe, poll, ack, nack, term; anything else
/// throws std::invalid_argument. Not thread-safe.
class ServedTarget final : public Target {
 public:
  explicit ServedTarget(int port);
  ~ServedTarget() override;
  ServedTarget(const ServedTarget&) = delete;
  ServedTarget& operator=(const ServedTarget&) = delete;

  [[nodiscard]] std::string name() const override { return "inproc"; }
  oplang::Outcome step(const oplang::Op& op) override;

 private:
  void connect();
  void drop();
  [[noreturn]] void lost(const std::string& what);

  int port_;
  int fd_ = -1;
  std::string buffered_;  // bytes read past the last reply line
};

}  // namespace conformance
