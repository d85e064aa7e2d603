// One worker's reads of a durable JetStream pull consumer, one pull request at a time.
// Internal to the kit (jetstream_target.cpp).
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace conformance {

struct NatsMsgDeleter {
  void operator()(natsMsg* msg) const { natsMsg_Destroy(msg); }
};
using NatsMsgPtr = std::unique_ptr<natsMsg, NatsMsgDeleter>;

/// A private inbox on one connection from which pull requests for one consumer are sent.
/// Each fetch waits for the server to end its request (a 404/408 status, or the batch
/// full): the server hands a message that becomes available (a nack, a redelivery) to any
/// request still open, and counts it as delivered, so a request the client stopped reading
/// would take a delivery nobody saw. Not thread-safe (one worker uses it); locks nothing.
class JetStreamPull {
 public:
  /// Subscribes to the inbox on nc (which must outlive this) for the consumer of stream.
  /// Throws TargetFailure if the subscription fails.
  JetStreamPull(natsConnection* nc, const std::string& stream, const std::string& consumer);
  ~JetStreamPull();
  JetStreamPull(const JetStreamPull&) = delete;
  JetStreamPull& operator=(const JetStreamPull&) = delete;

  /// Up to batch messages: asks with no_wait and an expiry of expires_ms (the server
  /// answers at once when it has messages and otherwise keeps the request that long), then
  /// reads until the request ends. If it has not ended after end_wait_ms more: throws
  /// TargetFailure, or returns what came if `tolerate_no_end` (a fault run: the server may
  /// have been killed with the request). Also throws TargetFailure for another status
  /// (409: max waiting, leadership change, consumer deleted) that ended it with nothing.
  std::vector<NatsMsgPtr> fetch(int batch, std::int64_t expires_ms, std::int64_t end_wait_ms,
                                bool tolerate_no_end);

 private:
  natsConnection* nc_;
  std::string next_subject_;  // $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>
  std::string inbox_;         // requests reply to <inbox>.<n>
  natsSubscription* sub_ = nullptr;
  std::uint64_t requests_ = 0;
};

}  // namespace conformance
