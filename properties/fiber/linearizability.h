// Parallel state-machine histories of the pull API (R11) and a Wing-Gong linearizability
// checker that judges them against the reference model (model::Model).
//
// A history is a sequential prefix (create topic, subscribe_pull, publish) followed by calls
// of 2-3 concurrent branches, each stamped with logical invoke/return ticks. It is
// linearizable when some sequential order of the branch calls that respects real time
// (a call that returned before another was invoked comes first) makes the model return
// exactly the recorded results. The search memoizes (calls done, model state) pairs as
// Lowe and Porcupine do, so equal states reached by different orders are explored once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/model.h"

namespace fiberprop {

/// The one topic of a parallel program.
inline constexpr const char* kLinTopic = "t";

/// One pull-API call as plain data: generated, printed, applied to the model or the broker.
/// Subscriptions are named "p<sub>", members "m<member>"; times are explicit milliseconds.
/// Consumer groups (R32): the group is "p<sub>" over the partitions of the topic; members
/// join (arg: ack timeout, max_deliveries, key: the assignor 0..3), leave and poll_group;
/// an answer with partition >= 0 names "t-<partition>" and carries `generation`.
struct PullOp {
  enum class Kind {
    kCreateTopic,  // arg: partitions (0 or 1: none)
    kSubscribePull,
    kPublish,
    kPoll,
    kAck,
    kNack,
    kExtend,
    kExpire,
    kJoin,
    kLeave,
    kPollGroup,
  };
  Kind kind = Kind::kPublish;
  int sub = 0;
  int member = 0;
  std::uint64_t offset = 0;  // ack / nack / extend
  std::int64_t now = 0;      // poll / ack / nack / extend / expire
  std::int64_t arg = 0;      // poll: max messages; extend: extension; subscribe_pull: ack_timeout
  int max_deliveries = 0;    // subscribe_pull
  // publish: 0 none, 1 "a", 2 "d" (murmur2 puts them on partitions 0 and 1 of 2);
  // subscribe_pull: 1 ordered (R31); join: the assignor
  int key = 0;
  int partition = -1;            // ack / nack / extend of a group's message (R32)
  std::uint64_t generation = 0;  // ... with the generation its member last saw
  bool operator==(const PullOp&) const = default;
};

/// "poll(p0, m1, now=10, max=2)" and the like.
std::string to_string(const PullOp& op);

/// One message handed out by poll, as results print it: "offset#attempt@deadline"; by
/// poll_group "t-p:offset#attempt@deadline~generation".
struct PolledItem {
  std::uint64_t offset = 0;
  int attempt = 0;
  std::int64_t deadline = 0;
  std::string topic{};
  std::uint64_t generation = 0;
};
/// One message moved by expire: "p<sub>:offset" plus "+dead" when dead-lettered.
struct ExpiredItem {
  std::string subscription;
  std::uint64_t offset = 0;
  bool dead = false;
};

/// Canonical result text of a poll: "[0#1@10 3#2@20]".
std::string format_poll(const std::vector<PolledItem>& items);
/// Canonical result text of a join: "gen=2 [0 1]" (R32).
std::string format_membership(std::uint64_t generation,
                              const std::vector<std::uint32_t>& partitions);
/// Canonical result text of an expire: "[p0:0 p1:2+dead]".
std::string format_expire(const std::vector<ExpiredItem>& items);
/// Canonical result text of an error: "error:<code name>".
std::string format_error(const char* code);

/// Applies op to the model; returns the canonical result text (the same text the broker
/// runner produces for an equal outcome). A model::Error becomes "error:<code>".
std::string apply(model::Model& m, const PullOp& op);

/// One completed call of a history.
struct Call {
  PullOp op;
  int branch = -1;           // -1: the sequential prefix
  std::uint64_t invoke = 0;  // logical tick just before the call
  std::uint64_t ret = 0;     // logical tick just after it returned
  std::string result;
};

/// A recorded parallel run: the prefix in order, then every branch call (any order).
struct ParallelHistory {
  std::vector<Call> prefix;
  std::vector<Call> calls;
};

/// What the checker found.
struct LinearizabilityResult {
  bool ok = false;
  std::string prefix_mismatch;  // set when the sequential prefix already disagrees
  // ok: a witness order (indices into calls); otherwise the longest order found whose
  // results all matched before the search got stuck.
  std::vector<std::size_t> order;
  std::size_t states = 0;  // search nodes visited
};

/// Whether a recorded result stands for the model's (the results of op as text).
using Agrees =
    std::function<bool(const PullOp& op, const std::string& recorded, const std::string& model)>;

/// How a history is judged: the model's switches (an engine profile, see model::Profile) and
/// which recorded results stand for the model's (null: equal text only; an engine that
/// cannot show part of a result says so here, e.g. expiry it runs on its own clock).
struct CheckOptions {
  model::Profile profile;
  Agrees agrees;
  bool memoize = true;
};

/// Wing-Gong search with real-time order. memoize: once a plain search has visited a few
/// hundred states, restart skipping (calls done, model state) pairs already explored. At most 64
/// branch calls. The model state key is complete for pull-only histories without filters, retention
/// or seek (what the generators make).
LinearizabilityResult check_linearizable(const ParallelHistory& h, const CheckOptions& options);
/// The strict model, equal results.
LinearizabilityResult check_linearizable(const ParallelHistory& h, bool memoize = true);

/// A readable account of a history: the prefix, each branch's calls with ticks and results,
/// and (when not linearizable) the longest matching order and what the model expected next.
std::string describe(const ParallelHistory& h, const LinearizabilityResult& r,
                     const CheckOptions& options = {});

}  // namespace fiberprop
