// JetStreamPull (jetstream_pull.h): pull requests on the JetStream wire protocol.
#include "jetstream_pull.h"

#include <chrono>
#include <cstring>
#include <string>

#include "conformance/target.h"

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

// libnats turns a status line ("NATS/1.0 408 Request Timeout") into these two headers.
constexpr const char* kStatusHeader = "Status";
constexpr const char* kDescriptionHeader = "Description";

// The status code of a status message, "" for a message of the stream: that one has an ack
// subject to reply to (its own headers may hold anything, a "Status" too).
std::string status_of(natsMsg* msg) {
  const char* ack = natsMsg_GetReply(msg);
  if (ack != nullptr && std::strncmp(ack, "$JS.ACK.", 8) == 0) return "";
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, kStatusHeader, &value) != NATS_OK || value == nullptr) {
    return "?";  // neither: ends nothing, and is not a message of the stream
  }
  return value;
}

std::string description_of(natsMsg* msg) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, kDescriptionHeader, &value) != NATS_OK || value == nullptr) {
    return "";
  }
  return value;
}

}  // namespace

JetStreamPull::JetStreamPull(natsConnection* nc, const std::string& stream,
                             const std::string& consumer)
    : nc_(nc), next_subject_("$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer) {
  natsInbox* inbox = nullptr;
  natsStatus s = natsInbox_Create(&inbox);
  if (s == NATS_OK) {
    inbox_ = inbox;
    natsInbox_Destroy(inbox);
    s = natsConnection_SubscribeSync(&sub_, nc_, (inbox_ + ".*").c_str());
  }
  if (s == NATS_OK) s = natsSubscription_SetPendingLimits(sub_, -1, -1);
  if (s == NATS_OK) s = natsConnection_Flush(nc_);
  if (s != NATS_OK) {
    natsSubscription_Destroy(sub_);
    throw TargetFailure("pull inbox for " + next_subject_ + ": " + natsStatus_GetText(s));
  }
}

JetStreamPull::~JetStreamPull() {
  natsSubscription_Unsubscribe(sub_);
  natsSubscription_Destroy(sub_);
}

std::vector<NatsMsgPtr> JetStreamPull::fetch(int batch, std::int64_t expires_ms,
                                             std::int64_t end_wait_ms, bool tolerate_no_end) {
  requests_ += 1;
  const std::string reply = inbox_ + "." + std::to_string(requests_);
  const std::string body = "{\"batch\":" + std::to_string(batch) +
                           ",\"expires\":" + std::to_string(expires_ms * 1000000) +
                           ",\"no_wait\":true}";
  natsStatus s = natsConnection_PublishRequest(nc_, next_subject_.c_str(), reply.c_str(),
                                               body.data(), static_cast<int>(body.size()));
  if (s != NATS_OK) {
    if (tolerate_no_end) return {};
    throw TargetFailure("pull request " + next_subject_ + ": " + natsStatus_GetText(s));
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(expires_ms + end_wait_ms);
  std::vector<NatsMsgPtr> out;
  // Messages and the closing status of one request come in order on one connection; a
  // status for an earlier request (one given up on) is stale and skipped.
  while (static_cast<int>(out.size()) < batch) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    natsMsg* raw = nullptr;
    s = left > 0 ? natsSubscription_NextMsg(&raw, sub_, left) : NATS_TIMEOUT;
    if (s != NATS_OK) {
      if (tolerate_no_end) return out;
      throw TargetFailure("pull request " + next_subject_ + " not ended by the server within " +
                          std::to_string(expires_ms + end_wait_ms) + " ms (" +
                          natsStatus_GetText(s) + ")");
    }
    NatsMsgPtr msg(raw);
    const std::string status = status_of(msg.get());
    if (status.empty()) {
      out.push_back(std::move(msg));
      continue;
    }
    if (status == "?" || reply != natsMsg_GetSubject(msg.get())) continue;
    if (status == "404" || status == "408" || !out.empty()) return out;
    throw TargetFailure("pull request " + next_subject_ + ": " + status + " " +
                        description_of(msg.get()));
  }
  return out;
}

}  // namespace conformance
