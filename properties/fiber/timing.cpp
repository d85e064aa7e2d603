// The timed model of the threaded dispatchers (timing.h).
#include "timing.h"

#include <algorithm>
#include <limits>

#include "failures.h"

namespace fiberprop {
namespace {

using broker::Offset;
constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

// How one handler call ended, as the dispatcher must have counted it.
struct Outcome {
  enum Kind { kOk, kFail, kUnknown };
  const HandlerCall* call = nullptr;
  Kind kind = kUnknown;
  bool overrun = false;
  std::int64_t lo = 0, hi = 0;  // when the dispatcher decided it (virtual ms)
};

Outcome outcome_of(const HandlerCall& c, const DispatcherTiming& t) {
  Outcome o;
  o.call = &c;
  const std::int64_t timeout = t.pool ? t.timeout_ms : 0;
  const std::int64_t ran = c.exit != 0 ? c.exit_ms - c.enter_ms : kForever;
  if (timeout > 0 && ran > timeout) {
    o.lo = c.enter_ms + timeout;
    o.hi = c.enter_ms + timeout + overrun_grace_ms(timeout);
    o.overrun = ran > timeout + overrun_grace_ms(timeout);
    o.kind = o.overrun ? Outcome::kFail : Outcome::kUnknown;
    return o;
  }
  o.kind = c.returned_true ? Outcome::kOk : Outcome::kFail;
  o.lo = o.hi = c.exit_ms;
  return o;
}

// The end of the time a call keeps a pool thread: its exit, or its abandonment at the latest.
std::int64_t busy_until(const HandlerCall& c, const DispatcherTiming& t) {
  std::int64_t end = c.exit != 0 ? c.exit_ms : kForever;
  if (t.pool && t.timeout_ms > 0)
    end = std::min(end, c.enter_ms + t.timeout_ms + overrun_grace_ms(t.timeout_ms));
  return end;
}

// Whether every one of `threads` pool threads ran other subscriptions' handlers throughout
// [from, to): only then may a ready re-offer wait.
bool threads_busy_throughout(const std::vector<HandlerCall>& all, int sub, std::int64_t from,
                             std::int64_t to, const DispatcherTiming& t) {
  if (!t.pool) return false;  // a lane has its own thread
  std::vector<std::pair<std::int64_t, int>> events;
  int busy = 0;
  for (const HandlerCall& d : all) {
    if (d.sub == sub) continue;
    const std::int64_t begin = d.enter_ms, end = busy_until(d, t);
    if (end <= from || begin >= to) continue;
    if (begin <= from) {
      ++busy;
    } else {
      events.push_back({begin, +1});
    }
    if (end < to) events.push_back({end, -1});
  }
  std::sort(events.begin(), events.end());               // at equal times, ends (-1) before starts
  if (busy < static_cast<int>(t.threads)) return false;  // every event is later than `from`
  for (std::size_t i = 0; i < events.size(); ++i) {
    busy += events[i].second;
    const bool last_at_this_time = i + 1 == events.size() || events[i + 1].first > events[i].first;
    if (last_at_this_time && busy < static_cast<int>(t.threads)) return false;
  }
  return true;
}

std::string describe(const HandlerCall& c) {
  return "offset " + std::to_string(c.offset) + " attempt " + std::to_string(c.attempt);
}

}  // namespace

std::int64_t overrun_grace_ms(std::int64_t timeout_ms) {
  return std::max<std::int64_t>(1, timeout_ms / 4) + 1;
}

std::string check_timing(const History& h, const std::vector<HandlerCall>& all,
                         const DispatcherTiming& t, const std::map<int, FinalState>& alive) {
  Failures f;
  std::map<int, std::vector<const HandlerCall*>> by_sub;
  for (const HandlerCall& c : h.handlers) {
    if (t.shutdown_began != 0 && c.enter > t.shutdown_began) continue;  // R16's business
    by_sub[c.sub].push_back(&c);                                        // in entry order
  }
  for (const auto& entry : by_sub) {
    const int sub = entry.first;
    const std::vector<const HandlerCall*>& calls = entry.second;  // lambdas below capture it
    auto name = h.sub_names.find(sub);
    const std::string who = (name != h.sub_names.end() ? name->second : "s" + std::to_string(sub));
    const auto un = h.unsubscribed_at.find(sub);
    const auto end = alive.find(sub);
    // R24: how long a failure of attempt k waits before its re-offer (0: none).
    const auto listed = t.waits.find(who);
    const bool lists = listed != t.waits.end() && !listed->second.empty();
    auto wait_after = [&](int attempt) -> std::int64_t {
      if (!lists || attempt < 1) return 0;
      const std::vector<std::int64_t>& list = listed->second;
      return list[std::min<std::size_t>(static_cast<std::size_t>(attempt), list.size()) - 1];
    };
    std::vector<Outcome> outcomes;
    for (const HandlerCall* c : calls) outcomes.push_back(outcome_of(*c, t));
    std::stable_sort(outcomes.begin(), outcomes.end(), [](const Outcome& a, const Outcome& b) {
      return a.lo < b.lo || (a.lo == b.lo && a.call->enter < b.call->enter);
    });
    // The offer that follows a call: the next call of the subscription to enter.
    auto next_after = [&](const HandlerCall* c) -> const HandlerCall* {
      auto it = std::find(calls.begin(), calls.end(), c);
      return ++it == calls.end() ? nullptr : *it;
    };
    auto reoffer_of = [&](const HandlerCall* c) -> const HandlerCall* {
      for (const HandlerCall* d : calls)
        // (After it: a redrive starts an offset's attempts again, R25.)
        if (d->offset == c->offset && d->attempt == c->attempt + 1 && d->enter > c->enter) return d;
      return nullptr;
    };
    // A redrive's offer: attempts from 1 again for an offset offered before (R25).
    auto redriven = [&](const HandlerCall& d) {
      if (d.attempt != 1) return false;
      for (const HandlerCall* e : calls)
        if (e->offset == d.offset && e->enter < d.enter) return true;
      return false;
    };
    int row = 0;        // failures in the current row
    bool known = true;  // false from an unknown outcome until the next success
    const HandlerCall* last_failed = nullptr;  // the row's latest failure
    for (const Outcome& o : outcomes) {
      const HandlerCall& c = *o.call;
      // After unsubscribe or shutdown began nothing more is owed.
      const bool owed =
          (un == h.unsubscribed_at.end() || c.enter < un->second) && t.shutdown_began == 0;
      if (o.kind == Outcome::kUnknown) {
        known = false;
        continue;
      }
      if (o.kind == Outcome::kOk) {
        row = 0;
        known = true;
        continue;
      }
      // Running out of messages ends a row too: if this new message may have been published
      // only after the row's last failure was decided, the dispatcher may have been idle.
      if (row == 1 && last_failed != nullptr && c.attempt == 1) {
        auto pub = h.published_at.find(c.offset);
        const std::uint64_t decided =
            outcome_of(*last_failed, t).overrun ? last_failed->enter : last_failed->exit;
        if (pub == h.published_at.end() || pub->second.first >= decided) known = false;
      }
      // A redrive's offer (attempts again from 1, R25) may come after the dispatcher ran out
      // of messages, which ended the row: unknown.
      if (redriven(c)) known = false;
      last_failed = &c;
      // (On a retained topic the message may have been dropped before its re-offer.)
      if (o.overrun && owed && !h.retention && end != alive.end() && !reoffer_of(&c)) {
        auto reason = end->second.reasons.find(c.offset);
        if (reason == end->second.reasons.end() || reason->second != "handler timeout")
          f.add("late-start") << who << " " << describe(c) << " ran past handler_timeout ("
                              << t.timeout_ms << " ms, from t=" << c.enter_ms
                              << "): it must count as failed and be re-offered by t=" << o.hi
                              << " or dead-lettered with reason 'handler timeout'; neither ("
                              << (reason == end->second.reasons.end()
                                      ? std::string("not dead-lettered")
                                      : "dead letter reason '" + reason->second + "'")
                              << ")\n";
      }
      const std::int64_t wait = wait_after(c.attempt);
      if (const HandlerCall* again = reoffer_of(&c);
          wait > 0 && again != nullptr && again->enter_ms < o.lo + wait)
        f.add("early-retry") << who << " " << describe(c) << " failed at t=" << o.lo
                             << " and must wait its back-off of " << wait
                             << " ms (R24), but attempt " << again->attempt
                             << " started at t=" << again->enter_ms << "\n";
      // With a back-off list the dispatcher runs out of ready messages whenever every
      // returned one waits, which ends a row (R15): rows are not judged there, only waits.
      if (lists) continue;
      if (!known) continue;
      const bool second = ++row == 2;
      if (second) row = 0;
      if (second) {
        const HandlerCall* next = next_after(&c);
        if (next != nullptr && next->enter_ms < o.lo + t.backoff_ms)
          f.add("early-start") << who << " " << describe(c) << " failed at t=" << o.lo
                               << ", the second failure in a row; the next offer ("
                               << describe(*next) << ") started at t=" << next->enter_ms
                               << ", before its back-off of " << t.backoff_ms
                               << " ms ended (t=" << o.lo + t.backoff_ms << ")\n";
        continue;
      }
      const HandlerCall* again = reoffer_of(&c);
      if (again == nullptr || again->enter_ms <= o.hi) continue;
      // A redrive's messages come first (R25, R5): the failed one follows them.
      if (const HandlerCall* next = next_after(&c); next != nullptr && redriven(*next)) continue;
      if (!threads_busy_throughout(all, sub, o.hi, again->enter_ms, t))
        f.add("late-start") << who << " " << describe(c) << " failed at t=" << o.hi
                            << ", the first failure in a row: it must be re-offered at once, but "
                               "attempt "
                            << again->attempt << " started at t=" << again->enter_ms
                            << (t.pool ? " although a pool thread was free meanwhile"
                                       : " (the lane has its own thread)")
                            << "\n";
    }
  }
  return f.str();
}

std::string check_shutdown(const std::vector<HandlerCall>& all, const DispatcherTiming& t) {
  if (t.shutdown_began == 0) return "";
  Failures f;
  std::size_t started_after = 0, overruns = 0;
  for (const HandlerCall& c : all) {
    const Outcome o = outcome_of(c, t);
    if (c.enter > t.shutdown_began) {
      ++started_after;
    } else if (o.overrun || o.kind == Outcome::kUnknown) {
      ++overruns;  // each may have been replaced by a new pool thread
    }
    const bool still_running = c.exit == 0 || c.exit > t.shutdown_returned;
    if (still_running && !o.overrun && o.kind != Outcome::kUnknown && c.enter < t.shutdown_returned)
      f.add("early-return") << "~Broker returned at tick " << t.shutdown_returned
                            << " while a handler call (sub " << c.sub << ", " << describe(c)
                            << ", entered at tick " << c.enter
                            << ") was still running and not past handler_timeout\n";
  }
  const std::size_t allowed = t.pool ? t.threads + overruns : t.lanes;
  if (started_after > allowed)
    f.add("start-after-shutdown") << started_after
                                  << " handler calls started after ~Broker began (tick "
                                  << t.shutdown_began << "); at most " << allowed
                                  << " may (one offer already taken per dispatcher thread)\n";
  return f.str();
}

}  // namespace fiberprop
