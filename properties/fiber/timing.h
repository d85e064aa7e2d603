// The timed model of the threaded dispatchers (SPEC R15, R16) on the fiber back-end's virtual
// time. From a push history it derives, for every failed handler call, when the next offer
// of its subscription may start and by when it must have started, and it reports the calls
// that started outside those windows. It also checks what may start after ~Broker began and
// when ~Broker may return. Virtual time only moves when every fiber sleeps, so "at once" is
// exact: a re-offer that waits while a dispatcher thread is free is late.
//
// The rules, per push subscription, over its handler calls in the order their outcomes were
// decided (a call past handler_timeout failed when the watchdog caught it, within
// overrun_grace_ms after the timeout; a call that ended just past the timeout, within the
// grace, has an unknown outcome, and the subscription's row is unknown until its next success):
//   - a failure that is the first of a row is re-offered at once: the re-offer (same offset,
//     next attempt) starts when it failed, or later only while every pool thread is busy with
//     other subscriptions' handlers (a lane has its own thread) - else `late-start`;
//   - a second failure in a row waits retry_backoff: the subscription's next offer starts no
//     earlier than the failure plus retry_backoff - else `early-start`; the back-off ends the
//     row (the next failure is a first one again), and so does running out of messages (a
//     failure of a message that may have been published after the row's last failure was
//     decided makes the row unknown);
//   - R24: a failure of attempt k on a subscription with a back-off list waits
//     backoff[min(k, size) - 1] (from when it was decided) before its re-offer starts - else
//     `early-retry`; on such a subscription rows are not judged (the at-once and back-off
//     rules above): the dispatcher runs out of ready messages whenever every returned one
//     waits, which ends a row, and what is ready when depends on the waits;
//   - a call past handler_timeout counts as failed: it is re-offered (as above) or dead-lettered
//     with reason `handler timeout` - else `late-start` (the re-offer never started);
//   - shutdown: after ~Broker began, each dispatcher thread starts at most one handler call
//     (the offer it had already taken) - else `start-after-shutdown`; when ~Broker returns,
//     only handlers abandoned after handler_timeout may still run - else `early-return`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "history.h"

namespace fiberprop {

/// What the broker line says about timing, and when shutdown happened.
struct DispatcherTiming {
  bool pool = false;
  std::size_t threads = 1;      // pool threads
  std::int64_t backoff_ms = 0;  // retry_backoff
  std::int64_t timeout_ms = 0;  // handler_timeout (pool only; 0: none)
  std::size_t lanes = 0;        // lane: push subscriptions and groups created in the run
  std::map<std::string, std::vector<std::int64_t>> waits;  // R24 back-off lists, by subscription
  std::uint64_t shutdown_began = 0;                        // tick before ~Broker (0: no shutdown)
  std::uint64_t shutdown_returned = 0;                     // tick after ~Broker returned
};

/// How late after handler_timeout an overrun may be caught (R15: a quarter of the timeout,
/// at least 1 ms, plus the 1 ms of a strict comparison).
std::int64_t overrun_grace_ms(std::int64_t timeout_ms);

/// Checks the re-offer and back-off windows of the push history `h` (its checked
/// subscriptions). `all`: every handler call of the run (for which pool threads were busy);
/// `alive`: final state of the subscriptions never unsubscribed (empty after a shutdown).
/// Returns "" or "<anomaly>: details" lines.
std::string check_timing(const History& h, const std::vector<HandlerCall>& all,
                         const DispatcherTiming& t, const std::map<int, FinalState>& alive);

/// Checks R16 on every handler call of the run; "" when there was no shutdown.
std::string check_shutdown(const std::vector<HandlerCall>& all, const DispatcherTiming& t);

}  // namespace fiberprop
