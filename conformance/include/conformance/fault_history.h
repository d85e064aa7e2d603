// The history of a fault run, judged by value: every publish carries a unique payload, so
// what a consumer was handed is matched to what was published without trusting the
// engine's offsets (which a crashed engine may hand out again). The anomalies carry
// Jepsen's queue names (jepsen/tests/kafka.clj) so readers already know them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace conformance {

/// How a publish ended: the engine said yes, said no, or could not say (an error or
/// timeout while the server was down: Jepsen's "info", it may or may not have happened).
enum class PublishResult { kOk, kFailed, kIndeterminate };

/// One event of a fault run, in the order the client saw them (one client thread, so
/// this is real-time order). kPublish is recorded when the call returned; kDeliver is one
/// message of a poll (a poll's messages in the order it returned them, `poll` numbering
/// the poll); kAck is an ack the engine answered (`accepted`: it said yes); kAckFailed an
/// ack the engine failed (an error or timeout: it may or may not have happened); kPollFailed
/// a poll the engine failed (it may have handed out messages the client never saw, which
/// then come back after their deadline).
struct FaultEvent {
  enum class Kind { kPublish, kDeliver, kAck, kPollFailed, kAckFailed };
  Kind kind = Kind::kPublish;
  std::string value;     // the payload ("v<i>")
  std::string consumer;  // kDeliver, kAck
  std::string id;        // kDeliver, kAck: the engine's name for the stored copy (its offset)
  PublishResult result = PublishResult::kOk;  // kPublish
  bool accepted = false;                      // kAck
  std::size_t poll = 0;                       // kDeliver
  std::int64_t at_ms = 0;  // since the run began (for reading a history, not judged)
  int attempt = 0;         // kDeliver: the engine's delivery count (0: the engine did not say)
  // How many times the server had been down (killed, or stopped for a restart) when the
  // call began: a call with a higher epoch than another's began after a server that might
  // have served the other was gone.
  std::size_t epoch = 0;
};

/// The anomalies, in table order:
///   lost            a publish acknowledged ok whose value was never delivered;
///   lost-unacked    a value delivered but never acked by the end (no ack of it accepted,
///                   none left unanswered), though the run ends by acking all it is handed:
///                   the engine dropped it before its consumer said yes;
///   unexpected      a delivered value never published (or whose publish definitely failed);
///   duplicated      one value stored twice (delivered under two engine ids);
///   acked-came-back a value delivered again after an ack of it was accepted;
///   floor-came-back a value delivered again although it and everything stored before it
///                   had been acked (accepted) by then: the ack floor went back. An engine
///                   that saves only a position (ours: SPEC R20; Kafka) may bring back acked
///                   values above the first unacked one (acked-came-back), never these.
///                   Judged by the engine ids read as numbers in delivery order (a gap or
///                   an id never seen stops the floor, so it never errs the other way);
///                   only acks since the server was last down move the floor (a restart
///                   may undo an ack above it); not judged for ids that are not numbers;
///   nonmonotonic    a consumer's first deliveries going backwards in publish order;
///   poll-skip       a poll handing out a value first while an earlier value, published ok
///                   before the poll began, had never been delivered (and was later: one
///                   never delivered is lost, not skipped);
///   attempts-went-back  a value handed out again under the same engine id, with no ack of
///                   it accepted (or left unanswered) since, at a delivery count at or below
///                   the one it was last handed out with: a hand-out not counted (R6), or one
///                   a restart undid although the engine keeps attempts (SPEC R34,
///                   AttemptsKept::kDurable), which lets a message that kills its consumer
///                   come back forever. A settled message takes its count with it: when a
///                   restart brings it back (acked-came-back) its count starts anew. Judged
///                   only for counts the engine says (above 0); with AttemptsKept::kWhileUp
///                   only between hand-outs with no server down between them (R19: a
///                   restart may lose what no commit saved).
/// Redelivery after a nack, a missed deadline or a refused ack is at-least-once and no
/// anomaly. A value published before a failed poll may have been handed to that poll
/// unseen: its first visible delivery is then no first delivery, and neither
/// nonmonotonic nor poll-skip counts it.
inline const std::vector<std::string>& anomaly_names() {
  static const std::vector<std::string> names = {
      "lost",         "lost-unacked",    "unexpected",
      "duplicated",   "acked-came-back", "floor-came-back",
      "nonmonotonic", "poll-skip",       "attempts-went-back"};
  return names;
}

/// What a run may expect of the engine's delivery counts across a restart: kWhileUp, they
/// only grow while the server stays up (R19: a restart may lose counts no commit saved);
/// kDurable, they never go back (R34: each hand-out's attempt is saved before it is made).
enum class AttemptsKept { kWhileUp, kDurable };

/// Each anomaly name (all of anomaly_names(), empty when not seen) -> the values showing it
/// (a value at most once per name). Values are "v<i>"; a value of another form delivered
/// counts as unexpected. If `judged_across_restarts` is given, it is set to how many hand-outs
/// attempts-went-back judged against one made before the server was last down. Throws
/// nothing but std::bad_alloc.
std::map<std::string, std::vector<std::string>> check_fault_history(
    const std::vector<FaultEvent>& history, AttemptsKept attempts = AttemptsKept::kWhileUp,
    std::size_t* judged_across_restarts = nullptr);

}  // namespace conformance
