// What the fibers of one concurrent broker run did, stamped with a logical clock, and the
// checkers that judge it. Failure names follow Jepsen's queue checkers.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "broker/broker.h"
#if defined(BROKER_SYNC_FIBER)
#include "sync/sync_fiber.h"
#endif

namespace fiberprop {

/// One call of a pull worker: invoked and returned at logical ticks.
struct PullCall {
  enum class Kind { kPoll, kAck, kNack, kExpire, kTerm, kExtend };
  PullCall(Kind k, int w, std::uint64_t at) : kind(k), worker(w), invoke(at) {}
  Kind kind = Kind::kPoll;
  int worker = 0;
  std::uint64_t invoke = 0;
  std::uint64_t ret = 0;
  std::int64_t invoke_ms = 0, ret_ms = 0;           // virtual time
  std::size_t max = 0;                              // poll: max messages (0: not known)
  bool wait = false;                                // poll: poll_wait
  std::vector<std::pair<broker::Offset, int>> got;  // poll: (offset, attempt)
  std::int64_t timeout_ms = 0;                      // poll_wait: its timeout
  broker::Offset offset = 0;                        // ack / nack / term / extend
  bool accepted = false;                            // ack / nack / term / extend
  std::int64_t extension_ms = 0;                    // extend: the deadline is invoke_ms + this
  std::vector<broker::Offset> expired;              // expire
};

/// One push handler call.
struct HandlerCall {
  int sub = 0;
  broker::Offset offset = 0;
  int attempt = 0;
  std::uint64_t enter = 0;
  std::uint64_t exit = 0;     // 0 while running
  std::int64_t enter_ms = 0;  // virtual time
  std::int64_t exit_ms = 0;   // virtual time (when exit != 0)
  bool returned_true = false;
};

/// The observer's clock is a synchronisation point: a recorder on real threads would order
/// its entries with a lock, so under weak memory each tick joins the seq_cst order (no
/// scheduling point), and what a history puts before an entry happens before it. Without
/// it, a broker call that began after another returned could read the memory as of before
/// that return, which the checkers' real-time order would call a violation. Nothing outside
/// a fiber run.
inline void observer_synchronizes() {
#if defined(BROKER_SYNC_FIBER)
  if (broker::sync::FiberRuntime* rt = broker::sync::installed_fiber_runtime())
    rt->fence(std::memory_order_seq_cst);
#endif
}

/// The recorded history of one run. Fibers share one thread, so plain fields suffice;
/// a record made right after a broker call returns is made before any other fiber runs.
struct History {
  std::uint64_t clock = 0;
  std::uint64_t tick() {
    observer_synchronizes();
    return ++clock;
  }
  std::vector<broker::Offset> published;
  std::map<broker::Offset, std::pair<std::uint64_t, std::int64_t>> published_at;  // ret tick, ms
  bool retention = false;  // the topic drops old messages: gaps are counted, not lost (R3)
  std::size_t keeps = 0;   // R3: the topic keeps the newest `keeps` messages (0: no such bound)
  int max_deliveries = 0;  // R23: the subscription's (0: no limit, or not known)
  std::size_t max_in_flight = 0;  // the subscription's bound (R22), 0: none
  // A hand-back (nack, expiry) is ready at once and an ack frees its place at once: no
  // back-off, no nack delay, no order by key. Only then are poll_wait's wake-ups judged
  // against hand-backs and acks.
  bool ready_at_once = true;
  bool ordered = false;  // R31: a key held back lets later offsets out first (no new-offset order)
  // R17: the broker expires by itself every `auto_expire_ms` (0: only `expire` calls do) and
  // a hand-out is held until its poll's now + `ack_timeout_ms`.
  std::int64_t auto_expire_ms = 0;
  std::int64_t ack_timeout_ms = 0;
  std::vector<PullCall> pull;
  std::vector<HandlerCall> handlers;
  std::map<int, std::uint64_t> unsubscribed_at;  // sub -> tick when unsubscribe returned
  // sub -> (invoke, return) ticks of each accepted redrive (R25): a dead letter it takes is
  // offered again with its attempts starting again at 1, after newer messages were offered.
  std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> redriven_at;
  std::map<int, std::string> sub_names;     // sub -> its name in reports ("s<sub>" if none)
  std::map<int, std::string> worker_names;  // worker -> its name in reports (the number if none)
};

/// Final broker-side facts of one subscription, read after the run went quiet.
struct FinalState {
  broker::SubscriptionStats stats;
  /// The engine keeps R13's counters: false for an outside engine that has none (the
  /// conformance kit's targets), and the counters check is skipped.
  bool stats_known = true;
  std::set<broker::Offset> dead;
  std::map<broker::Offset, std::string> reasons;  // dead letters' reasons
};

/// The name `names` gives id, else prefix + id (for reports).
std::string name_of(const std::map<int, std::string>& names, int id, const std::string& prefix);

/// Checks a pull history; returns "" or "<failure-name>: details" lines.
std::string check_pull(const History& h, const FinalState& end);
/// Checks a push history. `alive`: final state of subs never unsubscribed; `timeout_ms`:
/// the pool's handler timeout (0: none), after which a second offer may overlap.
std::string check_push(const History& h, const std::map<int, FinalState>& alive,
                       std::int64_t timeout_ms);
/// Checks that publish offsets are unique and dense from 0.
std::string check_offsets(const History& h);
/// Checks a subscription seeked by the program (attempts start again there, so the other
/// checks do not apply): every published offset >= `from` is confirmed (push: by a handler
/// call that entered after tick `after`, the seek's invoke; pull: by an ack invoked after it)
/// or dead-lettered, or, on a retained topic, accounted for by `skipped`. (Sound, not
/// complete: a confirmation during the seek may have been the one it forgot.)
std::string check_after_seek(const History& h, bool push, std::uint64_t after, broker::Offset from,
                             const FinalState& end);

}  // namespace fiberprop
