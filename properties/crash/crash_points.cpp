#include "crash_points.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "harness/model_states.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace props::crash {
namespace {

harness::DurableSetup setup_for(bool always) {
  harness::DurableSetup s;
  s.publish_sync = always ? broker::FsyncPolicy::always() : broker::FsyncPolicy::none();
  s.commit_sync = s.publish_sync;
  return s;
}

/// The names a probe looks at: the script's topics, subscriptions and groups, and the last
/// push subscribe of each name (a probe resumes it).
struct Names {
  std::set<std::string> topics;
  std::map<std::string, std::set<std::string>> subs;  // topic -> sub, member and group names
  std::map<std::string, std::set<std::string>> pulls;
  std::map<std::string, oplang::Subscribe> pushes;  // "topic/name" -> last subscribe
};

Names names_of(const oplang::Script& script) {
  Names n;
  for (const oplang::Op& op : script) {
    if (const auto* o = std::get_if<oplang::CreateTopic>(&op)) n.topics.insert(o->name);
    if (const auto* o = std::get_if<oplang::SubscribePull>(&op)) {
      n.subs[o->topic].insert(o->name);
      n.pulls[o->topic].insert(o->name);
    }
    if (const auto* o = std::get_if<oplang::Subscribe>(&op)) {
      n.subs[o->topic].insert(o->name);
      if (!o->group.empty()) n.subs[o->topic].insert(o->group);
      n.pushes[o->topic + "/" + o->name] = *o;
    }
  }
  return n;
}

/// A probe op and the key its outcome is judged under.
struct ProbeStep {
  std::string key;
  oplang::Op op;
};

/// Observes everything a restart must keep, in an order that disturbs nothing observed
/// before it: the topics, each log from its oldest kept message (through a new pull
/// subscription), each subscription's stats, dead letters and what it is offered next
/// (pull: a poll; push: resumed with its saved options, then one drain).
std::vector<ProbeStep> probe(const Names& n) {
  std::vector<ProbeStep> out;
  out.push_back({"topics", oplang::Topics{}});
  for (const std::string& t : n.topics) {
    out.push_back({t + ":end", oplang::EndOffset{t}});
    out.push_back({t + ":oldest", oplang::OldestOffset{t}});
    out.push_back({t + ":subscriptions", oplang::Subscriptions{t}});
  }
  for (const auto& [t, subs] : n.subs) {
    for (const std::string& s : subs) {
      out.push_back({t + "/" + s + ":stats", oplang::GetStats{t, s}});
      out.push_back({t + "/" + s + ":dead", oplang::GetDeadLetters{t, s}});
    }
  }
  for (const auto& [t, pulls] : n.pulls) {
    for (const std::string& p : pulls) {
      out.push_back({t + "/" + p + ":poll", oplang::Poll{t, p, "probe", 1000}});
    }
  }
  for (const auto& [key, sub] : n.pushes) {
    oplang::Subscribe resume = sub;
    resume.script = {};  // confirm everything
    resume.idempotent = false;
    resume.saved = true;  // R20: with the options the broker saved
    out.push_back({key + ":resume", resume});
  }
  out.push_back({"drain", oplang::Drain{}});  // its calls are judged per member below
  for (const std::string& t : n.topics) {
    oplang::SubscribePull log;
    log.topic = t;
    log.name = "probe";
    log.max_deliveries = 0;
    log.start = model::Start{model::Start::Kind::kBeginning, 0};
    out.push_back({t + ":probe", log});
    out.push_back({t + ":log", oplang::Poll{t, "probe", "probe", 1000}});
  }
  return out;
}

/// The probe's outcomes by key; a drain's handler calls are split by topic and member, so
/// each subscription is judged on its own (their commits are separate records).
using Observed = std::map<std::string, std::string>;

template <class Runner>
Observed observe(Runner& runner, const std::vector<ProbeStep>& steps) {
  Observed out;
  for (const ProbeStep& p : steps) {
    oplang::Outcome o = runner.step(p.op);
    if (p.key == "drain") {
      std::map<std::string, std::vector<model::HandlerCall>> by_member;
      for (const auto& call : o.calls)
        by_member[call.topic + "/" + call.subscription].push_back(call);
      for (auto& [member, calls] : by_member) {
        oplang::Outcome part;
        part.calls = std::move(calls);
        out[member + ":offers"] = oplang::print(part);
      }
      continue;
    }
    out[p.key] = oplang::print(o);
  }
  return out;
}

std::string describe(const CrashCase& c, const Verdict& v, const std::string& what) {
  std::ostringstream os;
  if (c.fault == CrashCase::Fault::kCrash) {
    os << what << "\n-- the disk died at point " << c.point << " (seed " << c.seed << ", "
       << (c.always ? "always" : "none") << ")";
  } else {
    os << what << "\n-- the disk failed call " << c.point << " with "
       << (c.fault == CrashCase::Fault::kEio ? "EIO" : "ENOSPC");
  }
  os << " during op " << v.op + 1 << ": "
     << (v.op < c.script.size() ? oplang::print(c.script[v.op]) : std::string("-"))
     << "\n-- replay: save the case below to FILE and run " << replay_command("FILE") << "\n"
     << replay_text(c);
  return os.str();
}

/// The model states a recovered broker may equal, key by key: restarted before the op the
/// disk died in, after it, for a drain after each of its offers from the `called`th on
/// (the handler calls the process made before it died all happened), and for an expire
/// after each of its subscriptions' commits.
std::vector<oplang::ModelRunner> candidates(const oplang::ModelRunner& before, const oplang::Op& op,
                                            std::size_t called) {
  std::vector<oplang::ModelRunner> out;
  if (called == 0) out.push_back(before);
  oplang::ModelRunner after = before;
  const oplang::Outcome done = after.step(op);
  out.push_back(after);
  if (std::holds_alternative<oplang::Drain>(op)) {
    // After n offers, or inside the nth (its attempt saved, R34; its result not).
    for (auto& m : harness::partial_drains(before, done.calls.size(), called))
      out.push_back(std::move(m));
  }
  if (std::holds_alternative<oplang::Expire>(op)) {
    for (auto& m : harness::partial_expires(before)) out.push_back(std::move(m));
  }
  for (auto& m : out) m.model().restart();
  return out;
}

Verdict judge_always(const CrashCase& c, Verdict v, harness::BrokerRunner& broker,
                     const oplang::ModelRunner& before, std::size_t called) {
  const std::vector<ProbeStep> steps = probe(names_of(c.script));
  const Observed got = observe(broker, steps);
  std::vector<Observed> allowed;
  for (auto& m : candidates(before, c.script[v.op], called)) allowed.push_back(observe(m, steps));
  for (const auto& [key, value] : got) {
    bool ok = false;
    for (const Observed& a : allowed) {
      auto it = a.find(key);
      ok = ok || (it != a.end() && it->second == value);
    }
    if (ok) continue;
    std::ostringstream why;
    why << "after the crash, " << key << " is\n  " << value << "\nbut the model allows only:";
    for (const Observed& a : allowed) {
      auto it = a.find(key);
      why << "\n  " << (it == a.end() ? std::string("(nothing)") : it->second);
    }
    v.failure = describe(c, v, why.str());
    return v;
  }
  for (const Observed& a : allowed) {  // an observation the broker lacks (a lost member)
    for (const auto& [key, value] : a) {
      if (got.count(key) == 0 && key.ends_with(":offers")) {
        bool some_without = false;
        for (const Observed& b : allowed) some_without = some_without || b.count(key) == 0;
        if (!some_without) {
          v.failure = describe(
              c, v, "after the crash, " + key + " made no offers; the model " + "offers " + value);
          return v;
        }
      }
    }
  }
  return v;
}

/// Without fsync: the broker opens, its offsets have no holes, and every message it kept
/// that the model still keeps is the one published at that offset (a suffix may be lost;
/// nothing is invented or moved).
Verdict judge_none(const CrashCase& c, Verdict v, harness::BrokerRunner& broker,
                   const oplang::ModelRunner& after) {
  for (const std::string& t : names_of(c.script).topics) {
    oplang::SubscribePull log;
    log.topic = t;
    log.name = "probe";
    log.max_deliveries = 0;
    log.start = model::Start{model::Start::Kind::kBeginning, 0};
    const oplang::Poll read{t, "probe", "probe", 1000};
    if (broker.step(log).error) continue;  // the topic is gone (or never made it to disk)
    const oplang::Outcome got = broker.step(read);
    oplang::ModelRunner model = after;
    model.step(log);
    const oplang::Outcome want = model.step(read);
    const auto* kept = std::get_if<std::vector<model::Received>>(&got.value);
    const auto* published = std::get_if<std::vector<model::Received>>(&want.value);
    if (kept == nullptr) continue;
    std::map<model::Offset, std::string> truth;
    if (published != nullptr) {
      for (const model::Received& m : *published) truth[m.offset] = m.payload;
    }
    for (std::size_t i = 0; i < kept->size(); ++i) {
      const model::Received& r = (*kept)[i];
      if (i > 0 && r.offset != (*kept)[i - 1].offset + 1) {
        v.failure =
            describe(c, v,
                     t + ": recovered offsets jump from " + std::to_string((*kept)[i - 1].offset) +
                         " to " + std::to_string(r.offset));
        return v;
      }
      auto it = truth.find(r.offset);
      if (it != truth.end() && it->second != r.payload) {
        v.failure = describe(c, v,
                             t + " offset " + std::to_string(r.offset) + " holds " + r.payload +
                                 ", but " + it->second + " was published there");
        return v;
      }
    }
  }
  return v;
}

}  // namespace

std::vector<std::uint64_t> points_per_op(const oplang::Script& script, bool always) {
  harness::BrokerRunner runner(setup_for(always));
  const std::uint64_t base = runner.disk()->points();
  std::vector<std::uint64_t> out;
  for (const oplang::Op& op : script) {
    runner.step(op);
    out.push_back(runner.disk()->points() - base);
  }
  return out;
}

std::uint64_t count_store_points(const oplang::Script& script, bool always) {
  harness::BrokerRunner runner(setup_for(always));
  const std::uint64_t base = runner.disk()->store_points();
  for (const oplang::Op& op : script) runner.step(op);
  return runner.disk()->store_points() - base;
}

std::uint64_t count_points(const oplang::Script& script, bool always) {
  const std::vector<std::uint64_t> ends = points_per_op(script, always);
  return ends.empty() ? 0 : ends.back();
}

namespace {

/// R33: the disk fails call `c.point` and the script goes on; then a clean restart and the
/// probe. Every step, the probe's too, is judged by the model's possible states.
Verdict run_error_case(const CrashCase& c) {
  Verdict v;
  harness::BrokerRunner broker(setup_for(true));
  broker::sim::SimFileSystem& disk = *broker.disk();
  disk.fail_at(disk.points() + c.point, std::make_error_code(c.fault == CrashCase::Fault::kEio
                                                                 ? std::errc::io_error
                                                                 : std::errc::no_space_on_device)
                                            .message());
  const std::uint64_t fired_before = disk.failures_fired();
  harness::ModelStates model;
  model.arm();
  std::vector<ProbeStep> steps;
  for (const oplang::Op& op : c.script) steps.push_back({"", op});
  const std::size_t script_steps = steps.size();
  steps.push_back({"", oplang::Restart{}});
  for (ProbeStep& p : probe(names_of(c.script))) steps.push_back(std::move(p));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i <= script_steps && !v.crashed && disk.failures_fired() > fired_before) {
      v.crashed = true;  // the error fired in the op before this one
      v.op = i - 1;
    }
    const oplang::Outcome got = broker.step(steps[i].op);
    const harness::ModelStates::Verdict judged = model.step(steps[i].op, got);
    if (judged.agrees) continue;
    if (!v.crashed) v.op = std::min(i, script_steps - 1);
    std::ostringstream why;
    why << (i < script_steps ? "op " + std::to_string(i + 1)
                             : "after the restart, probe step " + std::to_string(i - script_steps) +
                                   " (" + steps[i].key + ")")
        << ": " << oplang::print(steps[i].op) << "\n-- the model (" << model.size()
        << " possible states) first says:\n"
        << oplang::print(judged.expected) << "\n-- the broker:\n"
        << oplang::print(got);
    v.failure = describe(c, v, why.str());
    return v;
  }
  if (!v.crashed && disk.failures_fired() > fired_before) {
    v.crashed = true;
    v.op = script_steps - 1;
  }
  return v;
}

}  // namespace

Verdict run_case(const CrashCase& c) {
  if (c.fault != CrashCase::Fault::kCrash) return run_error_case(c);
  Verdict v;
  harness::BrokerRunner broker(setup_for(c.always));
  broker.disk()->crash_at(broker.disk()->points() + c.point);
  oplang::ModelRunner model;
  oplang::ModelRunner before;
  std::size_t called = 0;  // handler calls of the op the disk died in, made before it died
  for (std::size_t i = 0; i < c.script.size(); ++i) {
    before = model;
    const oplang::Outcome want = model.step(c.script[i]);
    const oplang::Outcome got = broker.step(c.script[i]);
    if (broker.disk()->crashed()) {
      v.crashed = true;
      v.op = i;
      called = broker.calls_before_death();
      break;
    }
    if (!(want == got)) {
      v.op = i;
      v.failure = describe(c, v,
                           "before any crash, the broker and the model disagree at op " +
                               std::to_string(i + 1) + "\n-- model:\n" + oplang::print(want) +
                               "\n-- broker:\n" + oplang::print(got));
      return v;
    }
  }
  if (!v.crashed) return v;
  const oplang::Outcome reopened = broker.step(oplang::Crash{c.seed});
  if (reopened.error) {
    v.failure = describe(c, v,
                         std::string("the broker did not open after the crash: ") +
                             model::to_string(*reopened.error));
    return v;
  }
  if (c.always) return judge_always(c, v, broker, before, called);
  model.step(c.script[v.op]);  // `model` stopped before it: the op may have happened
  return judge_none(c, v, broker, model);
}

std::string replay_text(const CrashCase& c) {
  if (c.fault != CrashCase::Fault::kCrash) {
    return "# error point=" + std::to_string(c.point) +
           " error=" + (c.fault == CrashCase::Fault::kEio ? "eio" : "enospc") + " policy=always\n" +
           oplang::print(c.script);
  }
  return "# crash point=" + std::to_string(c.point) + " seed=" + std::to_string(c.seed) +
         " policy=" + (c.always ? "always" : "none") + "\n" + oplang::print(c.script);
}

std::optional<CrashCase> parse_case(const std::string& text, std::string& error) {
  CrashCase c;
  const std::string head = text.substr(0, text.find('\n'));
  unsigned long long point = 0;
  unsigned long long seed = 0;
  char policy[16] = {0};
  char fault[16] = {0};
  if (std::sscanf(head.c_str(), "# error point=%llu error=%15s policy=%15s", &point, fault,
                  policy) == 3 &&
      (std::string(fault) == "eio" || std::string(fault) == "enospc")) {
    c.fault = std::string(fault) == "eio" ? CrashCase::Fault::kEio : CrashCase::Fault::kEnospc;
  } else if (std::sscanf(head.c_str(), "# crash point=%llu seed=%llu policy=%15s", &point, &seed,
                         policy) != 3) {
    error =
        "the first line must be: # crash point=N seed=S policy=always|none, or "
        "# error point=N error=eio|enospc policy=always";
    return std::nullopt;
  }
  c.point = point;
  c.seed = seed;
  c.always = std::string(policy) == "always";
  try {
    c.script = oplang::parse(text);
  } catch (const oplang::ParseError& e) {
    error = e.what();
    return std::nullopt;
  }
  return c;
}

std::string replay_command(const std::string& file) {
  return "CRASH_REPLAY=" + file +
         " build/default/properties/crash_points_test --gtest_filter=CrashPoints.ReplayFromFile";
}

}  // namespace props::crash
