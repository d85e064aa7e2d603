#include "conformance/runner.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <variant>

#include "conformance/generator.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace conformance {

namespace {

std::vector<model::Offset> offsets_of(const oplang::Outcome& o) {
  std::vector<model::Offset> out;
  if (const auto* r = std::get_if<std::vector<model::Received>>(&o.value)) {
    for (const model::Received& m : *r) out.push_back(m.offset);
  }
  return out;
}

/// The rule a step of op is checked against when it agrees (for the table's counts).
std::string home_rule(const oplang::Op& op) {
  return std::visit(
      [](const auto& o) -> std::string {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, oplang::CreateTopic> ||
                      std::is_same_v<T, oplang::DeleteTopic>) {
          return "R1";
        } else if constexpr (std::is_same_v<T, oplang::Publish>) {
          return "R2";
        } else if constexpr (std::is_same_v<T, oplang::SubscribePull>) {
          return "R4";
        } else if constexpr (std::is_same_v<T, oplang::Poll>) {
          return "R5";
        } else if constexpr (std::is_same_v<T, oplang::GetDeadLetters>) {
          return "R7";
        } else if constexpr (std::is_same_v<T, oplang::Unsubscribe>) {
          return "R9";
        } else if constexpr (std::is_same_v<T, oplang::Term>) {
          return "R23";
        } else if constexpr (std::is_same_v<T, oplang::Seek>) {
          return "R12";
        } else if constexpr (std::is_same_v<T, oplang::SeekToTime>) {
          return "R28";
        } else if constexpr (std::is_same_v<T, oplang::GetLag>) {
          return "R27";
        } else if constexpr (std::is_same_v<T, oplang::Subscribe> ||
                             std::is_same_v<T, oplang::Drain>) {
          return "R8";
        } else if constexpr (std::is_same_v<T, oplang::Nack>) {
          return o.delay ? "R24" : "R11";
        } else {
          return "R11";  // ack, nack, advance, expire
        }
      },
      op);
}

/// The model's oldest kept offset of the topic op publishes to or polls; nullopt for
/// another op or an unknown topic.
std::optional<model::Offset> oldest_of(const oplang::ModelRunner& runner, const oplang::Op& op) {
  std::string topic;
  if (const auto* p = std::get_if<oplang::Publish>(&op)) {
    topic = p->topic;
  } else if (const auto* q = std::get_if<oplang::Poll>(&op)) {
    topic = q->topic;
  } else if (const auto* d = std::get_if<oplang::GetDeadLetters>(&op)) {
    topic = d->topic;
  } else {
    return std::nullopt;
  }
  const std::vector<std::string> topics = runner.model().topics();
  if (std::find(topics.begin(), topics.end(), topic) == topics.end()) return std::nullopt;
  return runner.model().oldest_offset(topic);
}

// The pull subscriptions a script made with a max_in_flight (R22), as the model accepted
// them: a poll of one is also R22's step, and one that hands out another number of messages
// than the model breaks R22.
class Capped {
 public:
  // Follows op, which the model answered with `model`.
  void see(const oplang::Op& op, const oplang::Outcome& model) {
    if (const auto* s = std::get_if<oplang::SubscribePull>(&op);
        s != nullptr && s->max_in_flight > 0 && !model.error) {
      subs_.insert({s->topic, s->name});
    } else if (const auto* u = std::get_if<oplang::Unsubscribe>(&op); u != nullptr) {
      subs_.erase({u->topic, u->name});
    }
  }
  // Whether op polls a subscription with a max_in_flight.
  [[nodiscard]] bool polls(const oplang::Op& op) const {
    const auto* p = std::get_if<oplang::Poll>(&op);
    return p != nullptr && subs_.contains({p->topic, p->sub});
  }
  // The rule a disagreement of op breaks.
  [[nodiscard]] std::string rule(const oplang::Op& op, const oplang::Outcome& model,
                                 const oplang::Outcome& engine,
                                 std::optional<model::Offset> oldest) const {
    if (polls(op) && !model.error && offsets_of(model).size() != offsets_of(engine).size()) {
      return "R22";
    }
    return rule_for(op, model, engine, oldest);
  }

 private:
  std::set<std::pair<std::string, std::string>> subs_;
};

}  // namespace

std::string rule_for(const oplang::Op& op, const oplang::Outcome& model,
                     const oplang::Outcome& engine, std::optional<model::Offset> oldest) {
  if (model.error != engine.error) return "R14";
  if (std::holds_alternative<oplang::Poll>(op)) {
    if (offsets_of(model) == offsets_of(engine)) return "R6";  // same messages, other attempts
    std::vector<model::Offset> a = offsets_of(model);
    std::vector<model::Offset> b = offsets_of(engine);
    // An offer of a message retention dropped: the engine kept more than it should.
    if (oldest && std::any_of(b.begin(), b.end(), [&](model::Offset o) { return o < *oldest; })) {
      return "R3";
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b ? "R5" : "R11";  // order alone, or which messages were free to offer
  }
  return home_rule(op);
}

Verdict check(Target& target, const oplang::Script& script, const Profile& p,
              model::Millis lag_limit) {
  Verdict v;
  oplang::ModelRunner model(model_switches(p));
  // One model per switch turned off: where it disagrees and `model` does not, the switch
  // explains the engine.
  std::vector<std::pair<Switch, oplang::ModelRunner>> without;
  for (Switch s : p.switches)
    without.emplace_back(s, oplang::ModelRunner(model_switches(p.without(s))));
  std::set<Switch> needed;
  std::map<std::string, std::size_t> checked;
  Capped capped;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const oplang::Op& op = script[i];
    const std::optional<model::Offset> oldest_before = oldest_of(model, op);
    const oplang::Outcome want = model.step(op);
    const oplang::Outcome got = target.step(op);
    if (target.lag() > lag_limit) {
      v.void_run = true;
      break;
    }
    if (!agree(op, want, got, p, oldest_of(model, op))) {
      v.violation = Violation{i, capped.rule(op, want, got, oldest_of(model, op)), want, got};
      break;
    }
    if (capped.polls(op)) ++checked["R22"];
    capped.see(op, want);
    ++checked[home_rule(op)];
    if (want.error) ++checked["R14"];
    // A publish that trimmed the log (R3): the steps after it see what retention dropped.
    if (oldest_before && oldest_of(model, op) != oldest_before) ++checked["R3"];
    if (const auto* r = std::get_if<std::vector<model::Received>>(&want.value); r && !r->empty()) {
      ++checked["R6"];
    }
    for (auto& [s, m] : without) {
      const oplang::Outcome strict = m.step(op);
      if (!agree(op, strict, got, p.without(s), oldest_of(m, op))) needed.insert(s);
    }
  }
  v.needed.assign(needed.begin(), needed.end());
  v.checked.assign(checked.begin(), checked.end());
  return v;
}

oplang::Script shrink(const TargetFactory& factory, oplang::Script script, const Profile& p,
                      model::Millis margin, int confirmations, int trials) {
  std::string rule;
  {
    std::unique_ptr<Target> t = factory();
    const Verdict v = check(*t, script, p, margin / 2);
    if (!v.violation) return script;
    rule = v.violation->rule;
    script.resize(v.violation->step + 1);  // nothing after the first violation matters
  }
  auto fails = [&](const oplang::Script& candidate) {
    if (!keeps_margin(candidate, p, margin)) return false;
    // An engine that expires on its own clock (or has no deadline of its own) did so during
    // the advance: the model's expire stays right after it, or the trace would read as if
    // nothing expired.
    if (expires_with_advance(p)) {
      for (std::size_t i = 0; i < candidate.size(); ++i) {
        if (std::holds_alternative<oplang::Advance>(candidate[i]) &&
            (i + 1 == candidate.size() ||
             !std::holds_alternative<oplang::Expire>(candidate[i + 1]))) {
          return false;
        }
      }
    }
    for (int k = 0; k < confirmations; ++k) {
      if (trials-- <= 0) return false;
      std::unique_ptr<Target> t = factory();
      const Verdict v = check(*t, candidate, p, margin / 2);
      if (!v.violation || v.violation->rule != rule) return false;
    }
    return true;
  };
  // Delta debugging, greedy: drop chunks of halving size, keep any drop that still fails.
  for (std::size_t chunk = std::max<std::size_t>(1, script.size() / 2); chunk >= 1; chunk /= 2) {
    for (std::size_t start = 0; start + chunk <= script.size() && trials > 0;) {
      oplang::Script candidate = script;
      candidate.erase(candidate.begin() + static_cast<long>(start),
                      candidate.begin() + static_cast<long>(start + chunk));
      if (!candidate.empty() && fails(candidate)) {
        script = std::move(candidate);
      } else {
        start += chunk;
      }
    }
    if (chunk == 1) break;
  }
  // An advance and the expire after it go together.
  for (std::size_t i = 0; i + 1 < script.size() && trials > 0;) {
    if (std::holds_alternative<oplang::Advance>(script[i]) &&
        std::holds_alternative<oplang::Expire>(script[i + 1])) {
      oplang::Script candidate = script;
      candidate.erase(candidate.begin() + static_cast<long>(i),
                      candidate.begin() + static_cast<long>(i + 2));
      if (!candidate.empty() && fails(candidate)) {
        script = std::move(candidate);
        continue;
      }
    }
    ++i;
  }
  return script;
}

std::string replay_text(const std::string& target, const Profile& p, std::uint64_t seed,
                        const oplang::Script& script) {
  return "# conformance target=" + target + " profile=" + p.name + " seed=" + std::to_string(seed) +
         "\n" + oplang::print(script);
}

void side_by_side(Target& target, const oplang::Script& script, const Profile& p,
                  const std::function<void(const oplang::Op&, const SideStep&)>& each) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  auto ms = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(t - t0).count();
  };
  oplang::ModelRunner model(model_switches(p));
  for (std::size_t i = 0; i < script.size(); ++i) {
    const oplang::Op& op = script[i];
    SideStep s;
    s.index = i;
    // The model first: only the engine's call is timed.
    s.model = model.step(op);
    s.start_ms = ms(Clock::now());
    s.engine = target.step(op);
    s.end_ms = ms(Clock::now());
    s.oldest = oldest_of(model, op);
    s.agreed = agree(op, s.model, s.engine, p, s.oldest);
    each(op, s);
  }
}

std::string trace(Target& target, const oplang::Script& script, const Profile& p) {
  return traced_check(target, script, p).trace;
}

std::optional<TracedRun> fails_again(const TargetFactory& factory, const oplang::Script& script,
                                     const Profile& p, model::Millis lag_limit, int reruns) {
  for (int k = 0; k < reruns; ++k) {
    std::unique_ptr<Target> t = factory();
    TracedRun run = traced_check(*t, script, p, lag_limit);
    if (run.verdict.violation) return run;
  }
  return std::nullopt;
}

Finding reproduce(const TargetFactory& factory, const oplang::Script& script, const Profile& p,
                  model::Millis margin, int confirmations, int trials, int reruns) {
  Finding f;
  f.script = shrink(factory, script, p, margin, confirmations, trials);
  std::optional<TracedRun> shown = fails_again(factory, f.script, p, margin / 2, reruns);
  if (!shown) {
    f.script = script;
    shown = fails_again(factory, f.script, p, margin / 2, reruns);
  }
  if (shown) {
    f.reproduced = true;
    f.shown = std::move(*shown);
  }
  return f;
}

std::string disagreement_text(const std::string& engine, const oplang::Script& script,
                              const Violation& v) {
  std::ostringstream out;
  out << "step " << v.step + 1 << " of " << script.size() << ": "
      << (v.step < script.size() ? oplang::print(script[v.step]) : std::string("?")) << "\n"
      << "      model:  " << oplang::print(v.model) << "\n"
      << "      " << engine << ": " << oplang::print(v.engine) << "\n"
      << "      ^ violates " << v.rule << "\n";
  return out.str();
}

TracedRun traced_check(Target& target, const oplang::Script& script, const Profile& p,
                       model::Millis lag_limit) {
  TracedRun run;
  std::ostringstream out;
  bool marked = false;
  Capped capped;
  side_by_side(target, script, p, [&](const oplang::Op& op, const SideStep& s) {
    if (run.verdict.void_run) return;
    if (target.lag() > lag_limit) {
      run.verdict.void_run = true;
      out << "   (void from here: the engine fell " << target.lag()
          << " model ms behind the model's clock)\n";
      return;
    }
    if (!s.agreed && !run.verdict.violation) {
      run.verdict.violation =
          Violation{s.index, capped.rule(op, s.model, s.engine, s.oldest), s.model, s.engine};
    }
    out << (s.agreed ? "   " : (marked ? " ! " : ">> ")) << s.index + 1 << ". " << oplang::print(op)
        << "\n";
    out << "      model:  " << oplang::print(s.model) << "\n";
    if (!(s.model == s.engine)) {
      out << "      " << target.name() << ": " << oplang::print(s.engine) << "\n";
    }
    if (!s.agreed && !marked) {
      out << "      ^ violates " << capped.rule(op, s.model, s.engine, s.oldest)
          << " under profile " << p.name << "\n";
      marked = true;
    }
    capped.see(op, s.model);
  });
  run.trace = out.str();
  return run;
}

}  // namespace conformance
