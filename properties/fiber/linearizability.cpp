// The Wing-Gong search over parallel pull histories, with Lowe-style memoization.
#include "linearizability.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_set>
#include <utility>

namespace fiberprop {
namespace {

using Kind = PullOp::Kind;

std::string sub_name(int s) { return "p" + std::to_string(s); }
std::string member_name(int m) { return "m" + std::to_string(m); }
const char* boolean(bool b) { return b ? "true" : "false"; }
// An answer as the histories record it: taken or not.
const char* boolean(model::AckResult r) { return boolean(static_cast<bool>(r)); }
std::string key_name(int k) { return k == 0 ? "" : k == 1 ? "a" : "d"; }

// The topic an answer names: a group's partition, else the topic.
// An answer's offset as a program shows it: "oldest" before the run resolves it.
std::string offset_text(const PullOp& op) {
  return op.offset == ~std::uint64_t{0} ? std::string("oldest") : std::to_string(op.offset);
}

std::string answer_topic(const PullOp& op) {
  return op.partition < 0 ? std::string(kLinTopic)
                          : std::string(kLinTopic) + "-" + std::to_string(op.partition);
}

std::string apply_or_throw(model::Model& m, const PullOp& op) {
  const std::string sub = sub_name(op.sub);
  const std::string member = member_name(op.member);
  switch (op.kind) {
    case Kind::kCreateTopic:
      m.create_topic(kLinTopic, 0, 0,
                     static_cast<std::uint32_t>(std::max<std::int64_t>(1, op.arg)));
      return "ok";
    case Kind::kJoin: {
      model::PullOptions options;
      options.ack_timeout = op.arg;
      options.max_deliveries = op.max_deliveries;
      options.start.kind = model::Start::Kind::kBeginning;
      const model::Membership ms =
          m.join_group(kLinTopic, sub, member, static_cast<model::Assignor>(op.key), options);
      return format_membership(ms.generation, ms.partitions);
    }
    case Kind::kLeave:
      return boolean(m.leave_group(kLinTopic, sub, member));
    case Kind::kPollGroup: {
      std::vector<PolledItem> items;
      for (const model::Received& r :
           m.poll_group(kLinTopic, sub, member, op.now, static_cast<std::size_t>(op.arg)))
        items.push_back({r.offset, r.attempt, r.deadline, r.topic, r.generation});
      return format_poll(items);
    }
    case Kind::kSubscribePull: {
      model::PullOptions options;
      options.ack_timeout = op.arg;
      options.max_deliveries = op.max_deliveries;
      options.start.kind = model::Start::Kind::kBeginning;
      options.ordered_by_key = op.key == 1;
      m.subscribe_pull(kLinTopic, sub, options);
      return "ok";
    }
    case Kind::kPublish:
      return std::to_string(m.publish(kLinTopic, "x", {}, key_name(op.key)));
    case Kind::kPoll: {
      std::vector<PolledItem> items;
      for (const model::Received& r :
           m.poll(kLinTopic, sub, member, op.now, static_cast<std::size_t>(op.arg)))
        items.push_back({r.offset, r.attempt, r.deadline});
      return format_poll(items);
    }
    case Kind::kAck:
      return boolean(m.ack(answer_topic(op), sub, op.offset, member, op.now, op.generation));
    case Kind::kNack:
      return boolean(
          m.nack(answer_topic(op), sub, op.offset, member, op.now, std::nullopt, op.generation));
    case Kind::kExtend:
      return boolean(
          m.extend(answer_topic(op), sub, op.offset, member, op.now, op.arg, op.generation));
    case Kind::kExpire: {
      std::vector<ExpiredItem> items;
      for (const model::Expired& e : m.expire(op.now))
        items.push_back({e.subscription, e.offset, e.dead_lettered});
      return format_expire(items);
    }
  }
  return "?";
}

// Everything that decides the model's future answers to pull calls, as text. Observes a
// copy, then probes it: expiring everything and polling everything reveals the redelivery
// queue and the attempt counts that no observer returns directly.
std::string fingerprint(model::Model m) {
  constexpr model::Millis kLate = std::numeric_limits<model::Millis>::max() / 4;
  std::ostringstream out;
  const std::vector<std::string> topics = m.topics();
  auto dead_letters = [&](const std::string& t, const std::string& s) {
    for (const model::DeadLetter& d : m.dead_letters(t, s))
      out << 'd' << d.offset << ',' << d.attempts << ',' << d.reason << ';';
  };
  // R32: each group's generation, members and owners (with the generation since which).
  const std::vector<model::Model::GroupView> groups = m.consumer_groups();
  for (const model::Model::GroupView& g : groups) {
    out << "group " << g.name << '~' << g.generation << '[';
    for (const std::string& member : g.members) out << member << ' ';
    out << ']';
    for (const auto& [owner, since] : g.owners) out << owner << '^' << since << ';';
  }
  std::vector<std::string> logs;  // the topics with a log (a partitioned one routes only)
  for (const std::string& t : topics) {
    if (m.partitions(t) == 1) logs.push_back(t);
  }
  for (const std::string& t : logs) {
    out << t << '@' << m.end_offset(t) << '{';
    for (const std::string& s : m.pull_names(t)) {
      const model::Stats st = m.stats(t, s);
      out << s << ':' << st.cursor << ',' << st.delivered << ',' << st.redelivered << ','
          << st.confirmed << ',' << st.dead_lettered << ',' << st.skipped << ',' << st.filtered
          << ';';
      for (const model::Model::HeldView& h : m.held(t, s))
        out << 'h' << h.offset << ',' << h.member << ',' << h.deadline << ';';
      dead_letters(t, s);
    }
    out << '}';
  }
  out << "|probe:";
  for (const model::Expired& e : m.expire(kLate))
    out << e.topic << '/' << e.subscription << ':' << e.offset << (e.dead_lettered ? "+" : "")
        << ';';
  // A group's partitions are polled through the group: every member leaves the copy and a
  // probe joins alone, so it owns every partition (nothing is held after the expire above).
  for (const model::Model::GroupView& g : groups) {
    for (const std::string& member : g.members) m.leave_group(g.topic, g.name, member);
    m.join_group(g.topic, g.name, "~probe", g.assignor, g.options);
    out << g.name << '[';
    for (const model::Received& r : m.poll_group(g.topic, g.name, "~probe", kLate, 1u << 20))
      out << r.topic << ':' << r.offset << '#' << r.attempt << ' ';
    out << ']';
  }
  for (const std::string& t : logs) {
    for (const std::string& s : m.pull_names(t)) {
      bool grouped = false;
      for (const model::Model::GroupView& g : groups) {
        grouped = grouped || std::find(g.parts.begin(), g.parts.end(), t) != g.parts.end();
      }
      if (!grouped) {
        out << s << '[';
        for (const model::Received& r : m.poll(t, s, "~probe", kLate, 1u << 20))
          out << r.offset << '#' << r.attempt << ' ';
        out << ']';
      }
      dead_letters(t, s);
    }
  }
  return out.str();
}

bool agrees(const Agrees& agrees, const Call& c, const std::string& model) {
  return c.result == model || (agrees && agrees(c.op, c.result, model));
}

// States a plain search may visit before the checker switches to a memoized one.
constexpr std::size_t kPlainBudget = 200;

// Depth-first search over the calls not yet linearized.
class Search {
 public:
  // budget: give up (exhausted()) after this many states; 0 = no limit.
  Search(const std::vector<Call>& calls, const Agrees& agrees, bool memoize, std::size_t budget)
      : calls_(calls), agrees_(agrees), memoize_(memoize), budget_(budget) {
    const std::size_t n = calls.size();
    all_ = n == 64 ? ~0ULL : (1ULL << n) - 1;
    before_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (calls[j].ret < calls[i].invoke) before_[i] |= 1ULL << j;
  }

  bool run(const model::Model& start) { return dfs(0, start); }
  std::vector<std::size_t> path() const { return path_; }
  std::vector<std::size_t> best() const { return best_; }
  std::size_t states() const { return states_; }
  bool exhausted() const { return exhausted_; }

 private:
  bool dfs(std::uint64_t done, const model::Model& m) {
    ++states_;
    if (done == all_) return true;
    if (budget_ != 0 && states_ > budget_) exhausted_ = true;
    if (exhausted_) return false;
    if (memoize_ && !seen_.insert(std::to_string(done) + '|' + fingerprint(m)).second) return false;
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      const std::uint64_t bit = 1ULL << i;
      if ((done & bit) != 0 || (before_[i] & ~done) != 0) continue;
      model::Model next = m;
      if (!agrees(agrees_, calls_[i], apply(next, calls_[i].op))) continue;
      path_.push_back(i);
      if (path_.size() > best_.size()) best_ = path_;
      if (dfs(done | bit, next)) return true;
      path_.pop_back();
    }
    return false;
  }

  const std::vector<Call>& calls_;
  const Agrees& agrees_;
  bool memoize_;
  std::size_t budget_;
  bool exhausted_ = false;
  std::uint64_t all_ = 0;
  std::vector<std::uint64_t> before_;  // calls that returned before call i was invoked
  std::unordered_set<std::string> seen_;
  std::vector<std::size_t> path_, best_;
  std::size_t states_ = 0;
};

// "b1.2": the third call of branch 1 (by invoke tick).
std::map<std::size_t, std::string> labels(const std::vector<Call>& calls) {
  std::map<int, std::vector<std::size_t>> by_branch;
  for (std::size_t i = 0; i < calls.size(); ++i) by_branch[calls[i].branch].push_back(i);
  std::map<std::size_t, std::string> out;
  for (auto& [branch, idx] : by_branch) {
    std::sort(idx.begin(), idx.end(),
              [&](std::size_t a, std::size_t b) { return calls[a].invoke < calls[b].invoke; });
    for (std::size_t k = 0; k < idx.size(); ++k)
      out[idx[k]] = "b" + std::to_string(branch) + "." + std::to_string(k);
  }
  return out;
}

}  // namespace

std::string to_string(const PullOp& op) {
  std::ostringstream out;
  const std::string sub = sub_name(op.sub), member = member_name(op.member);
  switch (op.kind) {
    case Kind::kCreateTopic:
      out << "create_topic(" << kLinTopic;
      if (op.arg > 1) out << ", partitions=" << op.arg;
      out << ")";
      break;
    case Kind::kJoin:
      out << "join_group(" << sub << ", " << member << ", assignor=" << op.key
          << ", ack_timeout=" << op.arg << ", max_deliveries=" << op.max_deliveries << ")";
      break;
    case Kind::kLeave:
      out << "leave_group(" << sub << ", " << member << ")";
      break;
    case Kind::kPollGroup:
      out << "poll_group(" << sub << ", " << member << ", now=" << op.now << ", max=" << op.arg
          << ")";
      break;
    case Kind::kSubscribePull:
      out << "subscribe_pull(" << sub << ", ack_timeout=" << op.arg
          << ", max_deliveries=" << op.max_deliveries << ", start=beginning"
          << (op.key == 1 ? ", ordered_by_key)" : ")");
      break;
    case Kind::kPublish:
      out << "publish(" << kLinTopic << (op.key == 0 ? "" : ", key=" + key_name(op.key)) << ")";
      break;
    case Kind::kPoll:
      out << "poll(" << sub << ", " << member << ", now=" << op.now << ", max=" << op.arg << ")";
      break;
    case Kind::kAck:
    case Kind::kNack:
      out << (op.kind == Kind::kAck ? "ack(" : "nack(") << answer_topic(op) << "/" << sub << ", "
          << offset_text(op) << ", " << member << ", now=" << op.now;
      if (op.partition >= 0) out << ", gen=" << op.generation;
      out << ")";
      break;
    case Kind::kExtend:
      out << "extend(" << answer_topic(op) << "/" << sub << ", " << offset_text(op) << ", "
          << member << ", now=" << op.now << ", ext=" << op.arg;
      if (op.partition >= 0) out << ", gen=" << op.generation;
      out << ")";
      break;
    case Kind::kExpire:
      out << "expire(now=" << op.now << ")";
      break;
  }
  return out.str();
}

std::string format_membership(std::uint64_t generation,
                              const std::vector<std::uint32_t>& partitions) {
  std::string out = "gen=" + std::to_string(generation) + " [";
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    out += (i ? " " : "") + std::to_string(partitions[i]);
  }
  return out + "]";
}

std::string format_poll(const std::vector<PolledItem>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ' ';
    if (!items[i].topic.empty()) out += items[i].topic + ':';
    out += std::to_string(items[i].offset) + '#' + std::to_string(items[i].attempt) + '@' +
           std::to_string(items[i].deadline);
    if (items[i].generation != 0) out += '~' + std::to_string(items[i].generation);
  }
  return out + ']';
}

std::string format_expire(const std::vector<ExpiredItem>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ' ';
    out += items[i].subscription + ':' + std::to_string(items[i].offset) +
           (items[i].dead ? "+dead" : "");
  }
  return out + ']';
}

std::string format_error(const char* code) { return std::string("error:") + code; }

std::string apply(model::Model& m, const PullOp& op) {
  try {
    return apply_or_throw(m, op);
  } catch (const model::Error& e) {
    return format_error(e.what());
  }
}

LinearizabilityResult check_linearizable(const ParallelHistory& h, bool memoize) {
  CheckOptions options;
  options.memoize = memoize;
  return check_linearizable(h, options);
}

LinearizabilityResult check_linearizable(const ParallelHistory& h, const CheckOptions& options) {
  LinearizabilityResult r;
  const bool memoize = options.memoize;
  model::Model m(options.profile);
  for (const Call& c : h.prefix) {
    const std::string got = apply(m, c.op);
    if (!agrees(options.agrees, c, got)) {
      r.prefix_mismatch = to_string(c.op) + ": recorded " + c.result + ", the model says " + got;
      return r;
    }
  }
  if (h.calls.size() > 64) {
    r.prefix_mismatch = "more than 64 branch calls: too many to check";
    return r;
  }
  // Most histories linearize along the first orders tried, where fingerprinting states
  // costs more than it saves: search plainly first, memoized once that takes long.
  Search plain(h.calls, options.agrees, false, memoize ? kPlainBudget : 0);
  r.ok = plain.run(m);
  r.order = r.ok ? plain.path() : plain.best();
  r.states = plain.states();
  if (r.ok || !plain.exhausted()) return r;
  Search memoized(h.calls, options.agrees, true, 0);
  r.ok = memoized.run(m);
  r.order = r.ok ? memoized.path() : memoized.best();
  r.states += memoized.states();
  return r;
}

std::string describe(const ParallelHistory& h, const LinearizabilityResult& r,
                     const CheckOptions& options) {
  std::ostringstream out;
  const std::map<std::size_t, std::string> label = labels(h.calls);
  out << "prefix:\n";
  for (const Call& c : h.prefix) out << "  " << to_string(c.op) << " -> " << c.result << "\n";
  std::map<int, std::vector<std::size_t>> by_branch;
  for (const auto& [i, name] : label) by_branch[h.calls[i].branch].push_back(i);
  for (auto& [branch, idx] : by_branch) {
    std::sort(idx.begin(), idx.end(),
              [&](std::size_t a, std::size_t b) { return h.calls[a].invoke < h.calls[b].invoke; });
    out << "branch " << branch << ":\n";
    for (std::size_t i : idx) {
      const Call& c = h.calls[i];
      out << "  " << label.at(i) << " [" << c.invoke << ".." << c.ret << "] " << to_string(c.op)
          << " -> " << c.result << "\n";
    }
  }
  if (!r.prefix_mismatch.empty()) {
    out << "prefix disagrees with the model: " << r.prefix_mismatch << "\n";
    return out.str();
  }
  out << (r.ok ? "linearizable; witness order:" : "NOT linearizable; longest matching order (")
      << (r.ok ? ""
               : std::to_string(r.order.size()) + " of " + std::to_string(h.calls.size()) +
                     " calls):");
  for (std::size_t i : r.order) out << " " << label.at(i);
  out << "\n";
  if (r.ok) return out.str();
  // Replay that order, then say what the model answers for each call that could go next.
  model::Model m(options.profile);
  for (const Call& c : h.prefix) apply(m, c.op);
  std::uint64_t done = 0;
  for (std::size_t i : r.order) {
    apply(m, h.calls[i].op);
    done |= 1ULL << i;
  }
  for (std::size_t i = 0; i < h.calls.size(); ++i) {
    if ((done >> i) & 1) continue;
    bool ready = true;
    for (std::size_t j = 0; j < h.calls.size(); ++j)
      if (!((done >> j) & 1) && h.calls[j].ret < h.calls[i].invoke) ready = false;
    if (!ready) continue;
    model::Model next = m;
    out << "  then " << label.at(i) << " " << to_string(h.calls[i].op) << ": recorded "
        << h.calls[i].result << ", the model says " << apply(next, h.calls[i].op) << "\n";
  }
  out << "  (" << r.states << " search states)\n";
  return out.str();
}

}  // namespace fiberprop
