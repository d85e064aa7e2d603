// Parallel runs of the kit (conformance/parallel.h).
#include "conformance/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <latch>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <variant>

#include "history.h"
#include "model/errors.h"
#include "oplang/text.h"

namespace conformance {

namespace {

using fiberprop::Call;
using fiberprop::PullOp;

// The member the settle suffix polls as: no fiber's.
constexpr int kSettleMember = 99;

// "p3" -> 3, "m12" -> 12; the names generate_parallel makes.
int index_of(const std::string& name, char letter) {
  if (name.size() < 2 || name[0] != letter ||
      !std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw std::invalid_argument("parallel: '" + name + "' is not " + letter + "<number>");
  }
  return std::stoi(name.substr(1));
}

void require_topic(const std::string& topic) {
  if (topic != fiberprop::kLinTopic) {
    throw std::invalid_argument("parallel: the one topic is '" + std::string(fiberprop::kLinTopic) +
                                "', not '" + topic + "'");
  }
}

// The checker's form of an op of the pull subset that runs at model time now.
PullOp to_pull_op(const oplang::Op& op, model::Millis now) {
  PullOp p;
  p.now = now;
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, oplang::CreateTopic>) {
          require_topic(o.name);
          p.kind = PullOp::Kind::kCreateTopic;
        } else if constexpr (std::is_same_v<T, oplang::SubscribePull>) {
          require_topic(o.topic);
          if (!o.filter.empty() || o.start.kind != model::Start::Kind::kBeginning) {
            throw std::invalid_argument("parallel: subscriptions read everything from the start");
          }
          p.kind = PullOp::Kind::kSubscribePull;
          p.sub = index_of(o.name, 'p');
          p.arg = o.ack_timeout;
          p.max_deliveries = o.max_deliveries;
        } else if constexpr (std::is_same_v<T, oplang::Publish>) {
          require_topic(o.topic);
          p.kind = PullOp::Kind::kPublish;
        } else if constexpr (std::is_same_v<T, oplang::Poll>) {
          require_topic(o.topic);
          p.kind = PullOp::Kind::kPoll;
          p.sub = index_of(o.sub, 'p');
          p.member = index_of(o.member, 'm');
          p.arg = static_cast<std::int64_t>(o.max);
        } else if constexpr (std::is_same_v<T, oplang::Ack> || std::is_same_v<T, oplang::Nack>) {
          require_topic(o.topic);
          p.kind = std::is_same_v<T, oplang::Ack> ? PullOp::Kind::kAck : PullOp::Kind::kNack;
          p.sub = index_of(o.sub, 'p');
          p.member = index_of(o.member, 'm');
          p.offset = o.offset;
        } else if constexpr (std::is_same_v<T, oplang::Expire>) {
          p.kind = PullOp::Kind::kExpire;
        } else {
          throw std::invalid_argument("parallel: not an op of the pull subset: " +
                                      oplang::print(oplang::Op{o}));
        }
      },
      op);
  return p;
}

// The canonical result text the checker compares (fiberprop::apply's spelling).
std::string result_text(const oplang::Outcome& out) {
  if (out.error) return fiberprop::format_error(model::to_string(*out.error));
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, oplang::OffsetResult>) {
          return std::to_string(v.offset);
        } else if constexpr (std::is_same_v<T, oplang::BoolResult>) {
          return v.value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, model::AckResult>) {
          return v ? "true" : "false";  // the checker's histories record taken or not
        } else if constexpr (std::is_same_v<T, std::vector<model::Received>>) {
          std::vector<fiberprop::PolledItem> items;
          for (const model::Received& r : v) items.push_back({r.offset, r.attempt, r.deadline});
          return fiberprop::format_poll(items);
        } else if constexpr (std::is_same_v<T, std::vector<model::Expired>>) {
          std::vector<fiberprop::ExpiredItem> items;
          for (const model::Expired& e : v)
            items.push_back({e.subscription, e.offset, e.dead_lettered});
          return fiberprop::format_expire(items);
        } else {
          return "ok";
        }
      },
      out.value);
}

// "[3#2@10 1#2@10]" -> its items sorted (the settle poll is compared as a set).
std::string sorted_items(const std::string& text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return text;
  std::istringstream in(text.substr(1, text.size() - 2));
  std::vector<std::string> items;
  for (std::string item; in >> item;) items.push_back(item);
  std::sort(items.begin(), items.end());
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i > 0 ? " " : "") + items[i];
  return out + "]";
}

// A call as the linearizability checker reads it, and what the engine answered, whole (the
// queue checkers read the polled items from it).
struct Recorded {
  Call call;
  oplang::Outcome outcome;
};

// Runs op on target at model time `now`, stamped with ticks of the shared clock.
Recorded record_call(Target& target, const oplang::Op& op, model::Millis now, int branch,
                     std::atomic<std::uint64_t>& clock) {
  Recorded r;
  r.call.op = to_pull_op(op, now);
  r.call.branch = branch;
  r.call.invoke = ++clock;
  r.outcome = target.step(op);
  r.call.ret = ++clock;
  r.call.result = result_text(r.outcome);
  return r;
}

// One worker's calls and what it holds (to resolve "the oldest in hand").
struct FiberRun {
  std::vector<Recorded> calls;
  std::vector<model::Offset> hand;
  std::exception_ptr failure;
};

// The run as the fiber suite's queue checkers read it (properties/fiber/history.h): publishes
// from the setup, every worker call as a PullCall (worker = branch). An engine that expires
// on its own clock answers `expire` with nothing; the settle waited past every deadline
// before its expire, so there every hold still open has ended: its expire lists them all.
// An engine that answers every ack (acks_always_confirmed) settles a message with the first
// ack that reaches it; a later one of the same offset settled nothing, whatever it answered,
// so only the first true ack of each offset counts as accepted.
fiberprop::History queue_history(const std::vector<Recorded>& prefix,
                                 const std::vector<Recorded>& calls, bool engine_expires,
                                 bool acks_always_confirmed) {
  std::map<model::Offset, std::uint64_t> first_ack;  // offset -> ret tick of its first true ack
  for (const Recorded& r : calls) {
    if (r.call.op.kind != PullOp::Kind::kAck || r.outcome.error ||
        !oplang::accepted(r.outcome.value).value_or(false)) {
      continue;
    }
    auto [it, fresh] = first_ack.try_emplace(r.call.op.offset, r.call.ret);
    if (!fresh) it->second = std::min<std::uint64_t>(it->second, r.call.ret);
  }
  fiberprop::History h;
  for (const Recorded& r : prefix) {
    const auto* offset = std::get_if<oplang::OffsetResult>(&r.outcome.value);
    if (r.call.op.kind != PullOp::Kind::kPublish || r.outcome.error || offset == nullptr) continue;
    h.published.push_back(offset->offset);
    h.published_at[offset->offset] = {r.call.ret, r.call.op.now};
  }
  std::set<model::Offset> polled;
  for (const Recorded& r : calls) {
    const PullOp& op = r.call.op;
    fiberprop::PullCall c(fiberprop::PullCall::Kind::kPoll, r.call.branch, r.call.invoke);
    c.ret = r.call.ret;
    c.invoke_ms = c.ret_ms = op.now;
    if (op.kind == PullOp::Kind::kPoll) {
      c.max = static_cast<std::size_t>(op.arg);
      if (const auto* got = std::get_if<std::vector<model::Received>>(&r.outcome.value)) {
        for (const model::Received& m : *got) {
          c.got.push_back({m.offset, m.attempt});
          polled.insert(m.offset);
        }
      }
    } else if (op.kind == PullOp::Kind::kAck || op.kind == PullOp::Kind::kNack) {
      c.kind = op.kind == PullOp::Kind::kAck ? fiberprop::PullCall::Kind::kAck
                                             : fiberprop::PullCall::Kind::kNack;
      c.offset = op.offset;
      c.accepted = !r.outcome.error && oplang::accepted(r.outcome.value).value_or(false);
      if (c.accepted && acks_always_confirmed && op.kind == PullOp::Kind::kAck) {
        c.accepted = first_ack.at(op.offset) == r.call.ret;
      }
    } else if (op.kind == PullOp::Kind::kExpire) {
      c.kind = fiberprop::PullCall::Kind::kExpire;
      if (engine_expires) {
        c.expired.assign(polled.begin(), polled.end());
      } else if (const auto* gone = std::get_if<std::vector<model::Expired>>(&r.outcome.value)) {
        for (const model::Expired& e : *gone) c.expired.push_back(e.offset);
      }
    } else {
      continue;
    }
    h.pull.push_back(std::move(c));
  }
  return h;
}

// What the engine says of subscription p0 once the run went quiet: its dead letters, and
// its counters where it keeps R13's.
fiberprop::FinalState final_state(Target& target) {
  fiberprop::FinalState end;
  const oplang::Outcome letters =
      target.step(oplang::GetDeadLetters{std::string(fiberprop::kLinTopic), "p0"});
  if (const auto* dead = std::get_if<std::vector<model::DeadLetter>>(&letters.value)) {
    for (const model::DeadLetter& d : *dead) {
      end.dead.insert(d.offset);
      end.reasons[d.offset] = d.reason;
    }
  }
  const std::optional<model::Stats> s = target.stats(fiberprop::kLinTopic, "p0");
  end.stats_known = s.has_value();
  if (s) {
    end.stats = {.committed = s->committed,
                 .cursor = s->cursor,
                 .backlog = s->backlog,
                 .in_flight = s->in_flight,
                 .delivered = s->delivered,
                 .redelivered = s->redelivered,
                 .confirmed = s->confirmed,
                 .dead_lettered = s->dead_lettered,
                 .skipped = s->skipped,
                 .filtered = s->filtered};
  }
  return end;
}

void run_fiber(Target& worker, const oplang::Fiber& fiber, int branch, model::Millis now,
               std::atomic<std::uint64_t>& clock, FiberRun& out) {
  for (const oplang::Op& original : fiber.ops) {
    oplang::Op op = original;
    // "The oldest in hand" becomes the offset it names now; with nothing in hand, no call.
    auto resolve = [&](auto& o) {
      if (o.which == oplang::Which::kOffset) return true;
      if (o.which != oplang::Which::kOldest || out.hand.empty()) return false;
      o.offset = *std::min_element(out.hand.begin(), out.hand.end());
      o.which = oplang::Which::kOffset;
      return true;
    };
    if (auto* a = std::get_if<oplang::Ack>(&op); a != nullptr && !resolve(*a)) continue;
    if (auto* n = std::get_if<oplang::Nack>(&op); n != nullptr && !resolve(*n)) continue;
    Recorded r = record_call(worker, op, now, branch, clock);
    if (const auto* got = std::get_if<std::vector<model::Received>>(&r.outcome.value)) {
      for (const model::Received& m : *got) out.hand.push_back(m.offset);
    }
    if (r.call.op.kind == PullOp::Kind::kAck || r.call.op.kind == PullOp::Kind::kNack) {
      std::erase(out.hand, r.call.op.offset);
    }
    out.calls.push_back(std::move(r));
  }
}

}  // namespace

fiberprop::ParallelHistory split_polls(const fiberprop::ParallelHistory& h, int settle) {
  fiberprop::ParallelHistory out;
  out.prefix = h.prefix;
  for (const Call& c : h.calls) {
    if (c.op.kind != PullOp::Kind::kPoll || c.branch == settle || c.result.empty() ||
        c.result.front() != '[') {
      out.calls.push_back(c);
      continue;
    }
    std::istringstream items(c.result.size() >= 2 ? c.result.substr(1, c.result.size() - 2)
                                                  : std::string());
    std::int64_t got = 0;
    Call one = c;
    one.op.arg = 1;
    for (std::string item; items >> item; ++got) {
      one.result = "[" + item + "]";
      out.calls.push_back(one);
    }
    if (got < c.op.arg) {
      one.result = "[]";
      out.calls.push_back(one);
    }
  }
  return out;
}

oplang::Program generate_parallel(std::uint64_t seed, const ParallelOptions& o) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  const std::string topic = fiberprop::kLinTopic;
  oplang::Program p;
  p.setup.push_back(oplang::CreateTopic{topic});
  oplang::SubscribePull sub;
  sub.topic = topic;
  sub.name = "p0";
  sub.ack_timeout = o.ack_timeout;
  sub.max_deliveries = pick(0, 1) == 0 ? 0 : 3;
  sub.start.kind = model::Start::Kind::kBeginning;
  p.setup.push_back(sub);
  const std::size_t publishes = pick(1, o.max_publishes);
  for (std::size_t i = 0; i < publishes; ++i) {
    oplang::Publish pub;
    pub.topic = topic;
    pub.payload = "m" + std::to_string(i);
    p.setup.push_back(pub);
  }
  const std::size_t fibers = pick(o.min_fibers, o.max_fibers);
  for (std::size_t f = 0; f < fibers; ++f) {
    oplang::Fiber fiber;
    fiber.name = "w" + std::to_string(f);
    const std::string member = "m" + std::to_string(f);
    const std::size_t ops = pick(1, o.max_ops);
    for (std::size_t i = 0; i < ops; ++i) {
      const std::size_t roll = pick(0, 99);
      if (roll < 40) {
        fiber.ops.push_back(oplang::Poll{topic, "p0", member, pick(1, 2)});
      } else if (roll < 70) {
        fiber.ops.push_back(oplang::Ack{topic, "p0", 0, member, oplang::Which::kOldest});
      } else if (roll < 85) {
        fiber.ops.push_back(oplang::Nack{topic, "p0", 0, member, oplang::Which::kOldest});
      } else {
        fiber.ops.push_back(
            oplang::Ack{topic, "p0", pick(0, publishes - 1), member, oplang::Which::kOffset});
      }
    }
    p.fibers.push_back(std::move(fiber));
  }
  return p;
}

ParallelVerdict check_parallel(Target& target, const oplang::Program& program, const Profile& p,
                               const ParallelOptions& options) {
  ParallelVerdict verdict;
  fiberprop::ParallelHistory history;
  std::atomic<std::uint64_t> clock{0};
  model::Millis now = 0;
  std::size_t published = 0;
  std::vector<Recorded> prefix, calls;  // as history's, with the engine's whole answers
  auto client_call = [&](const oplang::Op& op, int branch) {
    return record_call(target, op, now, branch, clock);
  };

  for (const oplang::Op& op : program.setup) {
    if (const auto* a = std::get_if<oplang::Advance>(&op)) {
      target.step(op);
      now += a->ms;
      continue;
    }
    if (std::holds_alternative<oplang::Publish>(op)) ++published;
    prefix.push_back(client_call(op, -1));
  }

  // The fibers: every worker connected first, then all released at once.
  std::vector<std::unique_ptr<Target>> workers;
  for (std::size_t i = 0; i < program.fibers.size(); ++i) {
    std::unique_ptr<Target> w = target.worker();
    if (!w) throw std::invalid_argument("parallel: target '" + target.name() + "' has no workers");
    workers.push_back(std::move(w));
  }
  std::vector<FiberRun> runs(program.fibers.size());
  const model::Millis lag_before = target.lag();
  {
    std::latch go(static_cast<std::ptrdiff_t>(workers.size()));
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      threads.emplace_back([&, i] {
        go.arrive_and_wait();
        try {
          run_fiber(*workers[i], program.fibers[i], static_cast<int>(i), now, clock, runs[i]);
        } catch (...) {
          runs[i].failure = std::current_exception();
        }
      });
    }
  }
  workers.clear();
  for (FiberRun& run : runs) {
    if (run.failure) std::rethrow_exception(run.failure);
    for (Recorded& r : run.calls) calls.push_back(std::move(r));
  }
  // An engine on real time set each deadline when its poll ran: every ack and nack of the
  // fibers must come long before any of them, as the model's do.
  const model::Millis lag_after = std::max<model::Millis>(0, target.lag());
  if (lag_after - lag_before > options.ack_timeout - options.margin) {
    verdict.void_run = true;
    return verdict;
  }

  // Settle: past every deadline (the engine's, set as late as lag_after, too), then
  // everything comes back to one member, which confirms it all.
  const int settle = static_cast<int>(program.fibers.size());
  const model::Millis wait = options.ack_timeout + options.margin + lag_after;
  target.step(oplang::Advance{wait});
  now += wait;
  const model::Millis settle_at = now;
  const std::string topic = fiberprop::kLinTopic;
  const std::string member = "m" + std::to_string(kSettleMember);
  std::vector<oplang::Op> suffix = {oplang::Expire{},
                                    oplang::Poll{topic, "p0", member, published + 1}};
  for (std::size_t o = 0; o < published; ++o) {
    suffix.push_back(oplang::Ack{topic, "p0", o, member, oplang::Which::kOffset});
  }
  suffix.push_back(oplang::Poll{topic, "p0", member, 1});
  for (const oplang::Op& op : suffix) calls.push_back(client_call(op, settle));
  for (const Recorded& r : prefix) history.prefix.push_back(r.call);
  for (const Recorded& r : calls) history.calls.push_back(r.call);
  const bool engine_expires = p.has(Switch::kEngineExpires);

  // The queue checkers (Jepsen's names): what the history and the engine's final state say
  // of lost, duplicated, unexpected, double-held or skipped messages, whatever order the
  // calls linearize in.
  const fiberprop::History queue =
      queue_history(prefix, calls, engine_expires, p.has(Switch::kAcksAlwaysConfirmed));
  verdict.anomalies =
      fiberprop::check_offsets(queue) + fiberprop::check_pull(queue, final_state(target));

  fiberprop::CheckOptions check;
  check.profile = model_switches(p);
  check.agrees = [settle_at, engine_expires](const PullOp& op, const std::string& recorded,
                                             const std::string& model) {
    // An engine on its own clock reports no expiry; which of its sweeps returned a message
    // first is its own business, so the settle poll is a set.
    if (op.kind == PullOp::Kind::kExpire) return engine_expires;
    if (op.kind == PullOp::Kind::kPoll && op.now >= settle_at) {
      return sorted_items(recorded) == sorted_items(model);
    }
    return false;
  };
  verdict.calls = history.prefix.size() + history.calls.size();
  fiberprop::LinearizabilityResult r = fiberprop::check_linearizable(history, check);
  if (!r.ok && r.prefix_mismatch.empty() && p.has(Switch::kConcurrentPollsInterleave)) {
    fiberprop::ParallelHistory split = split_polls(history, settle);
    fiberprop::LinearizabilityResult relaxed = fiberprop::check_linearizable(split, check);
    if (relaxed.ok) {
      verdict.needed.push_back(Switch::kConcurrentPollsInterleave);
      history = std::move(split);
      r = std::move(relaxed);
    }
  }
  verdict.linearizable = r.ok && r.prefix_mismatch.empty();
  verdict.report = fiberprop::describe(history, r, check);
  if (!verdict.anomalies.empty()) verdict.report += "queue anomalies:\n" + verdict.anomalies;

  // The picture: calls the longest order placed are plain, the rest red.
  std::vector<bool> placed(history.calls.size(), r.ok);
  for (std::size_t i : r.order) placed[i] = true;
  for (const Call& c : history.prefix) {
    verdict.timeline.push_back({"client", fiberprop::to_string(c.op), "", c.result,
                                static_cast<double>(c.invoke), static_cast<double>(c.ret),
                                !r.prefix_mismatch.empty()});
  }
  for (std::size_t i = 0; i < history.calls.size(); ++i) {
    const Call& c = history.calls[i];
    const std::string row =
        c.branch == settle ? "client" : program.fibers[static_cast<std::size_t>(c.branch)].name;
    verdict.timeline.push_back({row, fiberprop::to_string(c.op), "", c.result,
                                static_cast<double>(c.invoke), static_cast<double>(c.ret),
                                !placed[i]});
  }
  return verdict;
}

oplang::Program shrink_parallel(const TargetFactory& factory, oplang::Program program,
                                const Profile& p, const ParallelOptions& options, int tries,
                                int trials) {
  auto fails = [&](const oplang::Program& candidate) {
    for (int t = 0; t < tries; ++t) {
      std::unique_ptr<Target> target = factory();
      if (check_parallel(*target, candidate, p, options).failed()) return true;
    }
    return false;
  };
  bool progress = true;
  while (progress && trials > 0) {
    progress = false;
    std::vector<oplang::Program> candidates;
    for (std::size_t f = 0; f < program.fibers.size(); ++f) {
      if (program.fibers.size() > 1) {
        oplang::Program c = program;
        c.fibers.erase(c.fibers.begin() + static_cast<std::ptrdiff_t>(f));
        candidates.push_back(std::move(c));
      }
      for (std::size_t i = 0; i < program.fibers[f].ops.size(); ++i) {
        oplang::Program c = program;
        oplang::Script& ops = c.fibers[f].ops;
        ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
        if (!ops.empty()) candidates.push_back(std::move(c));
      }
    }
    // The last publish (earlier offsets keep their numbers).
    if (std::holds_alternative<oplang::Publish>(program.setup.back()) &&
        std::count_if(program.setup.begin(), program.setup.end(), [](const oplang::Op& op) {
          return std::holds_alternative<oplang::Publish>(op);
        }) > 1) {
      oplang::Program c = program;
      c.setup.pop_back();
      candidates.push_back(std::move(c));
    }
    for (oplang::Program& c : candidates) {
      if (trials-- <= 0) break;
      if (fails(c)) {
        program = std::move(c);
        progress = true;
        break;
      }
    }
  }
  return program;
}

}  // namespace conformance
