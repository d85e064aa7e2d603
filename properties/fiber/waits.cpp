#include "waits.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace fiberprop {
namespace {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

}  // namespace

std::string check_waits(const std::vector<PollSeen>& polls, const std::vector<WakeSeen>& wakes) {
  std::ostringstream out;
  for (const PollSeen& p : polls) {
    if (!p.wait || !p.error.empty() || p.got > 0 || p.ret_ms - p.invoke_ms >= p.timeout_ms)
      continue;
    out << "early-return: poll_wait by " << p.member << " on " << p.sub.first << "/" << p.sub.second
        << " (ticks " << p.invoke << ".." << p.ret << ") returned nothing at t=" << p.ret_ms
        << " ms, " << p.ret_ms - p.invoke_ms << " ms after it began, before its " << p.timeout_ms
        << " ms timeout\n";
  }
  for (const WakeSeen& w : wakes) {
    for (const PollSeen& p : polls) {
      if (!p.wait || p.sub != w.sub || p.invoke >= w.ret || p.ret <= w.ret || p.ret_ms <= w.ret_ms)
        continue;
      // Another poll that took something after the call began may have taken what it made
      // ready (an unsubscribe makes nothing ready: it ends every wait).
      const bool taken_meanwhile =
          !w.ends_with_error && std::any_of(polls.begin(), polls.end(), [&](const PollSeen& q) {
            return &q != &p && q.sub == w.sub && q.got > 0 && q.ret > w.invoke && q.invoke < p.ret;
          });
      if (taken_meanwhile) continue;
      out << "stuck: poll_wait by " << p.member << " on " << p.sub.first << "/" << p.sub.second
          << " (ticks " << p.invoke << ".." << p.ret << ", t=" << p.invoke_ms << ".." << p.ret_ms
          << " ms) "
          << (p.error.empty() ? "returned " + std::to_string(p.got) + " message(s)"
                              : "ended with " + p.error)
          << " at t=" << p.ret_ms << " though " << w.what << " returned at tick " << w.ret
          << ", t=" << w.ret_ms << " ms: it slept through a wake-up\n";
      break;
    }
  }
  return out.str();
}

std::string check_expiry(const History& h) {
  std::ostringstream out;
  if (h.auto_expire_ms <= 0 || !h.ready_at_once || h.retention) return "";
  for (const PullCall& c : h.pull) {
    if (c.kind != PullCall::Kind::kPoll) continue;
    for (auto [o, attempt] : c.got) {
      // R7: expiring the last allowed attempt dead-letters the message.
      if (h.max_deliveries > 0 && attempt >= h.max_deliveries) continue;
      // Its later hand-outs (to anyone): the first ends what this one says, and a poll
      // that overlaps one may have found it taken already.
      auto takes = [o = o](const PullCall& p) {
        return p.kind == PullCall::Kind::kPoll &&
               std::any_of(p.got.begin(), p.got.end(), [o](auto g) { return g.first == o; });
      };
      std::uint64_t next = kNever;
      for (const PullCall& p : h.pull)
        if (p.ret > c.ret && takes(p)) next = std::min(next, p.ret);
      auto taken_before = [&](const PullCall& p) {
        return std::any_of(h.pull.begin(), h.pull.end(), [&](const PullCall& q) {
          return q.ret > c.ret && takes(q) && q.invoke < p.ret;
        });
      };
      // The deadline: the poll's now + ack timeout, or the last accepted extend's.
      std::int64_t deadline = c.ret_ms + h.ack_timeout_ms;
      std::uint64_t extended_at = 0;
      bool settled = false;
      for (const PullCall& p : h.pull) {
        if (p.worker != c.worker || p.offset != o || !p.accepted || p.invoke < c.ret ||
            p.invoke > next)
          continue;
        if (p.kind == PullCall::Kind::kExtend && p.invoke > extended_at) {
          extended_at = p.invoke;
          deadline = p.invoke_ms + p.extension_ms;
        } else if (p.kind == PullCall::Kind::kAck || p.kind == PullCall::Kind::kNack ||
                   p.kind == PullCall::Kind::kTerm) {
          settled = true;
        }
      }
      if (settled) continue;
      const std::int64_t due = deadline + kExpiryBoundMs;
      for (const PullCall& p : h.pull) {
        if (p.kind != PullCall::Kind::kPoll || p.ret <= c.ret || taken_before(p)) continue;
        // A poll that began once it was due: with room, it takes the returned message (under
        // a bound: the expiry freed a place, so it takes something).
        const bool room = h.max_in_flight > 0 ? p.got.empty() : p.got.size() < p.max;
        const bool began_due = p.invoke_ms >= due && room;
        // A poll_wait waiting when it was due returns then.
        const bool waited_past = p.wait && p.invoke_ms < due && p.ret_ms > due;
        if (!began_due && !waited_past) continue;
        out << "late-expiry: offset " << o << " attempt " << attempt << " was handed to worker "
            << name_of(h.worker_names, c.worker, "") << " at tick " << c.ret << " (t=" << c.ret_ms
            << " ms) with its deadline at t=" << deadline
            << (extended_at ? " (set by an extend at tick " + std::to_string(extended_at) + ")"
                            : std::string())
            << ", never answered, yet the " << (p.wait ? "poll_wait" : "poll") << " by worker "
            << name_of(h.worker_names, p.worker, "") << " (t=" << p.invoke_ms << ".." << p.ret_ms
            << " ms) " << (waited_past ? "was still waiting" : "did not get it")
            << " at t=" << std::max(due, p.invoke_ms) << ": automatic expiry (every "
            << h.auto_expire_ms << " ms) must return it within " << kExpiryBoundMs
            << " ms of its deadline\n";
        break;
      }
    }
  }
  return out.str();
}

}  // namespace fiberprop
