// Checkers of concurrent broker histories (see history.h).
#include "history.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

#include "failures.h"

namespace fiberprop {

std::string name_of(const std::map<int, std::string>& names, int id, const std::string& prefix) {
  auto it = names.find(id);
  return it != names.end() ? it->second : prefix + std::to_string(id);
}

namespace {

using broker::Offset;
constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

struct Hold {
  int worker;
  Offset offset;
  std::uint64_t invoke, ret, release;
  std::int64_t invoke_ms = 0;
};

// The first tick a pull call began or ended at virtual time `ms` or later (kNever if none).
std::uint64_t first_tick_at(const History& h, std::int64_t ms) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  for (const PullCall& c : h.pull) {
    if (c.invoke_ms >= ms) first = std::min(first, c.invoke);
    if (c.ret_ms >= ms) first = std::min(first, c.ret);
  }
  return first;
}

// Offers (offset, attempt) in hand-out order: no (offset, attempt) twice, no attempt jump;
// `restarts(i)`: whether offer i may start its offset's attempts again at 1 (R25: a redrive
// came since the offset's previous offer).
void check_attempts(const std::vector<std::pair<Offset, int>>& offers, Failures& f,
                    const std::string& who,
                    const std::function<bool(std::size_t, Offset)>& restarts = nullptr) {
  std::map<Offset, int> last;
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const auto [o, a] = offers[i];
    int& prev = last[o];
    if (a == 1 && prev > 0 && restarts && restarts(i, o)) prev = 0;
    if (a <= prev)
      f.add("duplicated-beyond-redelivery")
          << who << "offset " << o << " attempt " << a << " after attempt " << prev << "\n";
    else if (a != prev + 1)
      f.add("duplicated-beyond-redelivery")
          << who << "offset " << o << " attempt " << a << " without attempt " << a - 1 << "\n";
    prev = std::max(prev, a);
  }
}

// Published offsets neither confirmed (`done`) nor dead-lettered are lost, except on a retained
// topic, where retention may drop them if it counts each one in `skipped` (R3).
void report_missing(const History& h, const std::vector<Offset>& missing, const FinalState& end,
                    Failures& f, const std::string& done) {
  if (!h.retention) {
    for (Offset o : missing)
      f.add("lost") << "offset " << o << " neither " << done << " nor dead-lettered\n";
    return;
  }
  if (missing.size() <= end.stats.skipped) return;
  std::ostringstream list;
  for (Offset o : missing) list << " " << o;
  f.add("lost") << missing.size() << " offsets neither " << done << " nor dead-lettered ("
                << list.str() << " ), but retention counted only " << end.stats.skipped
                << " as skipped\n";
}

// R3 with R7: a failed offer returns its message, and a returned message below the oldest
// kept offset is dropped at the next catch-up (counted skipped), never offered again; only a
// redrive or a seek brings it back, its attempts from 1. Held while its handler ran, it was
// kept alive only until then: if a publish returned before the handler did and left its
// offset out of the newest `keeps`, the failure found it dropped. (Sound, not complete: a
// publish between the handler's return and the failure's apply is not seen. Not after a
// pool overrun: the failure came at the timeout, maybe before that publish.)
void check_returned_after_drop(const History& h, const std::vector<const HandlerCall*>& calls,
                               std::int64_t timeout_ms, const std::string& who, Failures& f) {
  for (const HandlerCall* c : calls) {
    if (c->returned_true || c->exit == 0) continue;
    if (timeout_ms > 0 && c->exit_ms - c->enter_ms >= timeout_ms) continue;
    std::optional<Offset> newest;  // published before the handler returned
    for (const auto& [o, when] : h.published_at)
      if (when.first < c->exit && (!newest || o > *newest)) newest = o;
    if (!newest || c->offset + h.keeps > *newest) continue;  // still among the newest
    for (const HandlerCall* d : calls) {
      if (d->offset != c->offset || d->attempt != c->attempt + 1 || d->enter < c->exit) continue;
      f.add("offered-after-drop") << who << "offset " << c->offset << " attempt " << d->attempt
                                  << " entered at tick " << d->enter << ", though attempt "
                                  << c->attempt << " failed at tick " << c->exit << " after offset "
                                  << *newest << " was published (the topic keeps " << h.keeps
                                  << "): a returned message retention dropped must be skipped\n";
    }
  }
}

// R11: a poll_wait returns as soon as its poll would hand something out, so in virtual time
// no later than a moment a message became ready while it waited. Such moments: a publish
// (without a bound: under one the new message may wait for a place); where hand-backs are
// ready at once (History::ready_at_once), an accepted nack or an expiry of an offset, and,
// under a bound, an accepted ack or term while an offset published before it had not been
// handed out yet (the freed place is that offset's or a lower one's). The message stays ready
// until a poll takes something: if its next hand-out is the poll_wait's own or a later one,
// and no other poll that handed something out overlaps the time from that moment's call to
// the poll_wait's return, the poll_wait slept through a wake-up.
void check_wakeups(const History& h, Failures& f) {
  struct Ready {
    Offset offset;
    std::uint64_t since;  // the offset's next hand-out returned after this tick
    std::uint64_t from;   // the moment's call was invoked then (a publish: returned)
    std::uint64_t tick;   // and returned then
    std::int64_t ms;
    std::string what;
  };
  std::map<Offset, std::set<std::uint64_t>> handed_at;  // the return ticks of its hand-outs
  for (const PullCall& c : h.pull)
    if (c.kind == PullCall::Kind::kPoll)
      for (auto [o, a] : c.got) handed_at[o].insert(c.ret);
  // The return tick of the offset's first hand-out after tick `since`, or kNever.
  auto next_handout = [&](Offset o, std::uint64_t since) {
    auto it = handed_at.find(o);
    if (it == handed_at.end()) return kNever;
    auto t = it->second.upper_bound(since);
    return t == it->second.end() ? kNever : *t;
  };
  std::vector<Ready> ready;
  if (h.ready_at_once && h.max_in_flight == 0 && !h.retention) {
    for (Offset o : h.published) {
      auto at = h.published_at.find(o);
      if (at != h.published_at.end())
        ready.push_back({o, 0, at->second.first, at->second.first, at->second.second,
                         "offset " + std::to_string(o) + " was published"});
    }
  }
  for (const PullCall& c : h.pull) {
    if (!h.ready_at_once) break;
    const std::string by = " by worker " + name_of(h.worker_names, c.worker, "");
    if (c.kind == PullCall::Kind::kNack && c.accepted) {
      ready.push_back({c.offset, c.invoke, c.invoke, c.ret, c.ret_ms,
                       "offset " + std::to_string(c.offset) + " was nacked" + by});
    } else if (c.kind == PullCall::Kind::kExpire) {
      for (Offset o : c.expired)
        ready.push_back(
            {o, c.invoke, c.invoke, c.ret, c.ret_ms, "offset " + std::to_string(o) + " expired"});
    } else if ((c.kind == PullCall::Kind::kAck || c.kind == PullCall::Kind::kTerm) && c.accepted &&
               h.max_in_flight > 0 && !h.retention) {
      for (Offset o : h.published) {
        auto at = h.published_at.find(o);
        if (at == h.published_at.end() || at->second.first >= c.invoke ||
            next_handout(o, 0) <= c.ret)
          continue;
        ready.push_back({o, 0, c.invoke, c.ret, c.ret_ms,
                         "offset " + std::to_string(c.offset) + " was " +
                             (c.kind == PullCall::Kind::kAck ? "acked" : "terminated") + by +
                             ", freeing a place under max_in_flight for offset " +
                             std::to_string(o)});
        break;
      }
    }
  }
  for (const PullCall& c : h.pull) {
    if (c.kind != PullCall::Kind::kPoll || !c.wait) continue;
    for (const Ready& r : ready) {
      if (r.tick <= c.invoke || r.tick >= c.ret || r.ms >= c.ret_ms) continue;
      const std::uint64_t next = next_handout(r.offset, r.since);
      if (next == kNever || next < c.ret) continue;  // dead-lettered, dropped, or taken
      const bool taken_meanwhile =
          std::any_of(h.pull.begin(), h.pull.end(), [&](const PullCall& p) {
            return &p != &c && p.kind == PullCall::Kind::kPoll && !p.got.empty() &&
                   p.ret > r.from && p.invoke < c.ret;
          });
      if (taken_meanwhile) continue;
      f.add("stuck") << "poll_wait by worker " << name_of(h.worker_names, c.worker, "")
                     << " (ticks " << c.invoke << ".." << c.ret << ", t=" << c.invoke_ms << ".."
                     << c.ret_ms << " ms) returned " << c.got.size()
                     << " message(s) at t=" << c.ret_ms << " though " << r.what << " at tick "
                     << r.tick << ", t=" << r.ms
                     << " ms, and no other poll took anything in between: it slept through a "
                        "wake-up\n";
      break;
    }
  }
}

}  // namespace

std::string check_after_seek(const History& h, bool push, std::uint64_t after, Offset from,
                             const FinalState& end) {
  Failures f;
  std::set<Offset> done;
  if (push) {
    for (const HandlerCall& c : h.handlers)
      if (c.enter > after && c.returned_true) done.insert(c.offset);
  } else {
    for (const PullCall& c : h.pull)
      if (c.kind == PullCall::Kind::kAck && c.accepted && c.invoke > after) done.insert(c.offset);
  }
  std::vector<Offset> missing;
  for (Offset o : h.published)
    if (o >= from && !done.count(o) && !end.dead.count(o)) missing.push_back(o);
  report_missing(h, missing, end, f,
                 std::string(push ? "confirmed" : "acked") + " after the seek to " +
                     std::to_string(from) + " began (tick " + std::to_string(after) + ")");
  return f.str();
}

std::string check_offsets(const History& h) {
  Failures f;
  std::vector<Offset> sorted = h.published;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != i) {
      f.add("inconsistent-offsets") << "publish offsets not 0.." << sorted.size() - 1 << " (got "
                                    << sorted[i] << " at rank " << i << ")\n";
      break;
    }
  }
  return f.str();
}

std::string check_pull(const History& h, const FinalState& end) {
  Failures f;
  const std::set<Offset> published(h.published.begin(), h.published.end());
  std::vector<Hold> holds;
  std::vector<std::pair<Offset, int>> offers;
  std::set<Offset> acked, first_offers;
  std::uint64_t delivered = 0, redelivered = 0, confirmed = 0;
  for (const PullCall& c : h.pull) {
    if (c.kind != PullCall::Kind::kPoll) continue;
    Offset prev_new = 0;
    bool any_new = false;
    for (auto [o, a] : c.got) {
      ++delivered;
      if (a > 1) ++redelivered;
      offers.push_back({o, a});
      holds.push_back({c.worker, o, c.invoke, c.ret, kNever, c.invoke_ms});
      if (!published.count(o))
        f.add("unexpected") << "poll returned offset " << o << " never published\n";
      if (a == 1) {
        if (any_new && o <= prev_new && !h.ordered)
          f.add("nonmonotonic") << "one poll returned new offsets " << prev_new << " then " << o
                                << "\n";
        prev_new = o;
        any_new = true;
        first_offers.insert(o);
      }
    }
  }
  // Attempts: hand-out order is only known between polls that did not overlap; the attempt
  // numbers themselves must still be unique per offset.
  {
    std::vector<std::pair<Offset, int>> sorted = offers;
    std::sort(sorted.begin(), sorted.end());
    check_attempts(sorted, f, "");
  }
  // Releases: accepted ack/nack by the holder, or an expire that moved the offset.
  for (Hold& hold : holds) {
    for (const PullCall& c : h.pull) {
      const bool own = (c.kind == PullCall::Kind::kAck || c.kind == PullCall::Kind::kNack ||
                        c.kind == PullCall::Kind::kTerm) &&
                       c.accepted && c.worker == hold.worker && c.offset == hold.offset &&
                       c.invoke > hold.ret;
      const bool expired = c.kind == PullCall::Kind::kExpire && c.ret > hold.invoke &&
                           std::count(c.expired.begin(), c.expired.end(), hold.offset);
      if (own || expired) hold.release = std::min(hold.release, c.invoke);
    }
    // R17: under automatic expiry a hold may end by the timer, from its earliest deadline
    // on (an accepted extend may set an earlier one).
    if (h.auto_expire_ms > 0) {
      std::int64_t deadline = hold.invoke_ms + h.ack_timeout_ms;
      for (const PullCall& c : h.pull)
        if (c.kind == PullCall::Kind::kExtend && c.accepted && c.worker == hold.worker &&
            c.offset == hold.offset && c.invoke > hold.ret)
          deadline = std::min(deadline, c.invoke_ms + c.extension_ms);
      hold.release = std::min(hold.release, first_tick_at(h, deadline));
    }
  }
  for (const Hold& a : holds) {
    for (const Hold& b : holds) {
      if (&a == &b || a.offset != b.offset) continue;
      if (b.invoke > a.ret && b.ret < a.release) {
        f.add("double-held") << "offset " << a.offset << " held by worker "
                             << name_of(h.worker_names, a.worker, "") << " (ticks " << a.ret << ".."
                             << a.release << ") and handed to worker "
                             << name_of(h.worker_names, b.worker, "") << " at " << b.ret << "\n";
      }
    }
  }
  // R22: never more held at once than the bound. A hold is certain from its poll's return
  // to its release's invoke; more certain holds at one tick than the bound is a poll that
  // handed out past it.
  if (h.max_in_flight > 0) {
    for (const Hold& a : holds) {
      std::size_t at_once = 0;
      for (const Hold& b : holds) at_once += b.ret <= a.ret && a.ret < b.release ? 1 : 0;
      if (at_once > h.max_in_flight) {
        f.add("over-max-in-flight")
            << at_once << " messages held at tick " << a.ret << " (offset " << a.offset
            << " handed to worker " << name_of(h.worker_names, a.worker, "") << "), max_in_flight "
            << h.max_in_flight << "\n";
        break;
      }
    }
  }
  // Polls that did not overlap hand out new offsets in increasing order.
  for (const PullCall& x : h.pull) {
    if (h.ordered) break;
    for (const PullCall& y : h.pull) {
      if (x.kind != PullCall::Kind::kPoll || y.kind != PullCall::Kind::kPoll || x.ret >= y.invoke)
        continue;
      for (auto [ox, ax] : x.got) {
        for (auto [oy, ay] : y.got) {
          if (ax == 1 && ay == 1 && ox >= oy)
            f.add("nonmonotonic") << "new offset " << oy << " handed out after new offset " << ox
                                  << "\n";
        }
      }
    }
  }
  for (const PullCall& c : h.pull) {
    if (c.kind != PullCall::Kind::kAck || !c.accepted) continue;
    ++confirmed;
    if (!acked.insert(c.offset).second)
      f.add("acked-came-back") << "offset " << c.offset << " acked twice\n";
    for (const PullCall& p : h.pull) {
      if (p.kind != PullCall::Kind::kPoll || p.invoke < c.ret) continue;
      for (auto [o, a] : p.got) {
        if (o == c.offset)
          f.add("acked-came-back") << "offset " << o << " acked at tick " << c.ret
                                   << ", polled again at " << p.ret << " (attempt " << a << ")\n";
      }
    }
  }
  // R23: a message whose term was accepted is dead at once: never handed out again, and in
  // the dead letters as terminated.
  for (const PullCall& c : h.pull) {
    if (c.kind != PullCall::Kind::kTerm || !c.accepted) continue;
    if (!end.dead.count(c.offset)) {
      f.add("terminated-came-back") << "offset " << c.offset << " terminated at tick " << c.ret
                                    << " is not in the dead letters\n";
    }
    for (const PullCall& p : h.pull) {
      if (p.kind != PullCall::Kind::kPoll || p.invoke < c.ret) continue;
      for (auto [o, a] : p.got) {
        if (o == c.offset)
          f.add("terminated-came-back")
              << "offset " << o << " terminated at tick " << c.ret << ", polled again at " << p.ret
              << " (attempt " << a << ")\n";
      }
    }
  }
  std::vector<Offset> missing;
  for (Offset o : published) {
    if (!acked.count(o) && !end.dead.count(o)) missing.push_back(o);
    if (!h.retention && !first_offers.count(o) && first_offers.size() && o < *first_offers.rbegin())
      f.add("poll-skip") << "offset " << o << " never offered while later offsets were\n";
  }
  report_missing(h, missing, end, f, "acked");
  // A poll with room to spare skips nothing that was there: a new message published before
  // the poll began and first handed out only after it returned was skipped by it; a poll_wait
  // that returned nothing after a message arrived during its wait slept through it.
  std::map<Offset, std::uint64_t> first_handout;
  for (const PullCall& c : h.pull) {
    if (c.kind != PullCall::Kind::kPoll) continue;
    for (auto [o, a] : c.got)  // the poll that took it began then
      if (a == 1 && (!first_handout.count(o) || c.invoke < first_handout[o]))
        first_handout[o] = c.invoke;
  }
  // (With a max_in_flight a poll may come back short because the bound was reached: then
  // a short poll says nothing, and this check is left out.)
  for (const PullCall& c : h.pull) {
    if (h.max_in_flight > 0) break;
    if (c.kind != PullCall::Kind::kPoll || c.max == 0 || c.got.size() >= c.max) continue;
    for (const auto& [o, handed] : first_handout) {
      auto pub = h.published_at.find(o);
      if (pub == h.published_at.end() || handed <= c.ret) continue;
      if (pub->second.first < c.invoke) {
        f.add("poll-skip") << (c.wait ? "poll_wait" : "poll") << " by worker "
                           << name_of(h.worker_names, c.worker, "") << " (ticks " << c.invoke
                           << ".." << c.ret << ") returned " << c.got.size() << " of max " << c.max
                           << " while offset " << o << " (published by tick " << pub->second.first
                           << ") waited; the poll that first took it began at tick " << handed
                           << "\n";
      } else if (c.wait && c.got.empty() && pub->second.second < c.ret_ms) {
        f.add("stuck") << "poll_wait by worker " << name_of(h.worker_names, c.worker, "")
                       << " (t=" << c.invoke_ms << ".." << c.ret_ms
                       << " ms) returned nothing though offset " << o
                       << " was published at t=" << pub->second.second
                       << " and taken only by a later poll (from tick " << handed
                       << "): a lost wakeup\n";
      }
    }
  }
  check_wakeups(h, f);
  if (!end.stats_known) return f.str();
  const broker::SubscriptionStats& s = end.stats;
  const bool adds_up =
      h.retention ? s.delivered <= s.confirmed + s.dead_lettered + s.redelivered + s.skipped
                  : s.delivered == s.confirmed + s.dead_lettered + s.redelivered;
  if (s.delivered != delivered || s.redelivered != redelivered || s.confirmed != confirmed ||
      s.dead_lettered != end.dead.size() || s.in_flight != 0 || s.backlog != 0 || !adds_up) {
    f.add("counters") << "stats delivered=" << s.delivered << " redelivered=" << s.redelivered
                      << " confirmed=" << s.confirmed << " dead=" << s.dead_lettered
                      << " in_flight=" << s.in_flight << " backlog=" << s.backlog
                      << "; history delivered=" << delivered << " redelivered=" << redelivered
                      << " confirmed=" << confirmed << " dead letters=" << end.dead.size() << "\n";
  }
  return f.str();
}

std::string check_push(const History& h, const std::map<int, FinalState>& alive,
                       std::int64_t timeout_ms) {
  Failures f;
  std::map<int, std::vector<const HandlerCall*>> by_sub;
  for (const auto& entry : alive) by_sub[entry.first];
  for (const HandlerCall& c : h.handlers) by_sub[c.sub].push_back(&c);  // in entry order
  for (auto& [sub, calls] : by_sub) {
    const std::string who = name_of(h.sub_names, sub, "s") + " ";
    auto un = h.unsubscribed_at.find(sub);
    std::vector<std::pair<Offset, int>> offers;
    Offset last_new = 0;
    bool any_new = false;
    std::set<Offset> ok;
    std::map<Offset, std::uint64_t> last_enter;  // each offset's latest offer
    const auto rd = h.redriven_at.find(sub);
    // R25: whether a redrive may have taken effect between an offset's previous offer and
    // `enter` (it returned after the one began and began before the other).
    auto redriven_since = [&](Offset o, std::uint64_t enter) {
      auto prev = last_enter.find(o);
      if (rd == h.redriven_at.end() || prev == last_enter.end()) return false;
      for (const auto& [invoke, ret] : rd->second)
        if (ret > prev->second && invoke < enter) return true;
      return false;
    };
    std::vector<bool> restarted;  // per offer: a redrive's first offer of its offset
    for (const HandlerCall* c : calls) {
      const bool again = c->attempt == 1 && redriven_since(c->offset, c->enter);
      restarted.push_back(again);
      last_enter[c->offset] = c->enter;
      offers.push_back({c->offset, c->attempt});
      if (c->returned_true) ok.insert(c->offset);
      if (h.max_deliveries > 0 && c->attempt > h.max_deliveries) {
        f.add("beyond-max-deliveries")
            << who << "offset " << c->offset << " offered at attempt " << c->attempt
            << ", past max_deliveries " << h.max_deliveries << " (R23: dead-lettered instead)\n";
      }
      if (un != h.unsubscribed_at.end() && c->enter > un->second) {
        f.add("delivery-after-unsubscribe")
            << who << "handler entered at tick " << c->enter << " for offset " << c->offset
            << "; unsubscribe returned at " << un->second << "\n";
      }
      if (c->attempt == 1 && !again) {
        if (any_new && c->offset <= last_new)
          f.add("nonmonotonic") << who << "offset " << c->offset << " first offered after "
                                << last_new << "\n";
        last_new = c->offset;
        any_new = true;
      }
      for (const HandlerCall* d : calls) {  // a second offer while one runs (not overrun)
        if (d == c || d->enter >= c->enter || (d->exit != 0 && d->exit < c->enter)) continue;
        const bool overrun = timeout_ms > 0 && c->enter_ms - d->enter_ms >= timeout_ms;
        if (!overrun)
          f.add("double-held") << who << "offset " << c->offset << " offered while offset "
                               << d->offset << " was still in its handler\n";
      }
    }
    check_attempts(offers, f, who, [&restarted](std::size_t i, Offset) { return restarted[i]; });
    if (h.keeps > 0) check_returned_after_drop(h, calls, timeout_ms, who, f);
    // R25 with R5 and R15: a redrive's messages come before new ones. After it returned, at
    // most one new message (taken before it, its handler not yet entered) may start before
    // each message it returned is offered again.
    if (rd != h.redriven_at.end()) {
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (!restarted[i]) continue;
        const HandlerCall& back = *calls[i];
        // The latest redrive that returned before it: each one's window holds the next's.
        std::uint64_t latest = 0;
        for (const auto& [invoke, ret] : rd->second)
          if (ret < back.enter) latest = std::max(latest, ret);
        if (latest != 0) {
          const std::uint64_t ret = latest;
          std::size_t early = 0;
          const HandlerCall* second = nullptr;
          for (std::size_t j = 0; j < i; ++j) {
            const HandlerCall& c = *calls[j];
            if (c.enter > ret && c.attempt == 1 && !restarted[j] && ++early == 2) second = &c;
          }
          if (second != nullptr)
            f.add("redrive-order")
                << who << "offset " << second->offset << " (new) entered at tick " << second->enter
                << ", the second new message after a redrive returned at tick " << ret
                << ", before offset " << back.offset
                << ", which it returned, was offered again at tick " << back.enter << "\n";
        }
      }
    }
    auto a = alive.find(sub);
    if (a == alive.end()) continue;
    std::vector<Offset> missing;
    for (Offset o : h.published)
      if (!ok.count(o) && !a->second.dead.count(o)) missing.push_back(o);
    report_missing(h, missing, a->second, f, who + "confirmed");
    const broker::SubscriptionStats& s = a->second.stats;
    const bool adds_up =
        h.retention ? s.delivered <= s.confirmed + s.dead_lettered + s.redelivered + s.skipped
                    : s.delivered == s.confirmed + s.dead_lettered + s.redelivered;
    // dead_lettered keeps its history; redriven counts the dead letters a redrive took (R25).
    if (s.delivered != calls.size() || s.in_flight != 0 || s.backlog != 0 ||
        s.dead_lettered != a->second.dead.size() + s.redriven || !adds_up) {
      f.add("counters") << who << "delivered=" << s.delivered << " (handler calls " << calls.size()
                        << ") confirmed=" << s.confirmed << " dead=" << s.dead_lettered
                        << " redelivered=" << s.redelivered << " redriven=" << s.redriven
                        << " in_flight=" << s.in_flight << " backlog=" << s.backlog << "\n";
    }
  }
  return f.str();
}

}  // namespace fiberprop
