// Property: parse(print(x)) == x for arbitrary ops, scripts and programs, and parsing never
// crashes.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>

#include "oplang/text.h"

namespace {

using model::EffectKind;
using model::Step;
using model::Verdict;

rc::Gen<std::string> any_string() {
  return rc::gen::oneOf(rc::gen::element<std::string>("t", "orders", "w1", "", "key", "a b"),
                        rc::gen::arbitrary<std::string>());
}

rc::Gen<model::Headers> any_headers() {
  return rc::gen::container<model::Headers>(any_string(), any_string());
}

rc::Gen<model::Start> any_start() {
  return rc::gen::oneOf(rc::gen::just(model::Start{}),
                        rc::gen::just(model::Start{model::Start::Kind::kBeginning, 0}),
                        rc::gen::map(rc::gen::arbitrary<model::Offset>(), [](model::Offset o) {
                          return model::Start{model::Start::Kind::kOffset, o};
                        }));
}

rc::Gen<Step> any_step() {
  return rc::gen::apply(
      [](int effect, std::string topic, std::string name, std::string payload, model::Offset offset,
         int verdict, std::int64_t ms) {
        Step s;
        s.effect = static_cast<EffectKind>(effect);
        if (s.effect == EffectKind::kUnsubscribe || s.effect == EffectKind::kPublish ||
            s.effect == EffectKind::kSeek) {
          s.topic = topic;
        }
        if (s.effect == EffectKind::kUnsubscribe || s.effect == EffectKind::kSeek) s.name = name;
        if (s.effect == EffectKind::kPublish) s.payload = payload;
        if (s.effect == EffectKind::kSeek) s.offset = offset;
        if (s.effect == EffectKind::kStall) s.ms = ms;
        s.verdict = static_cast<Verdict>(verdict);
        return s;
      },
      rc::gen::inRange(0, 7), any_string(), any_string(), any_string(),
      rc::gen::arbitrary<model::Offset>(), rc::gen::inRange(0, 4),
      rc::gen::inRange<std::int64_t>(0, std::numeric_limits<std::int64_t>::max()));
}

// Which message an ack / nack / extend names: by offset in scripts; in programs also the
// member's hand (then the offset is 0, as parse() leaves it).
template <typename T>
rc::Gen<T> with_which(rc::Gen<T> gen, bool in_program) {
  if (!in_program) return gen;
  return rc::gen::apply(
      [](T o, int which) {
        o.which = static_cast<oplang::Which>(which);
        if (o.which != oplang::Which::kOffset) o.offset = 0;
        return o;
      },
      gen, rc::gen::inRange(0, 3));
}

rc::Gen<oplang::Op> any_op(bool in_program = false) {
  using namespace oplang;
  auto s = any_string;
  auto offset = rc::gen::arbitrary<model::Offset>;
  auto millis = rc::gen::arbitrary<model::Millis>;
  return rc::gen::oneOf(
      rc::gen::construct<Op>(rc::gen::construct<CreateTopic>(s(), rc::gen::arbitrary<std::size_t>(),
                                                             rc::gen::arbitrary<std::size_t>())),
      rc::gen::construct<Op>(rc::gen::construct<DeleteTopic>(s())),
      rc::gen::construct<Op>(rc::gen::construct<Publish>(s(), s(), any_headers(), s())),
      rc::gen::construct<Op>(rc::gen::construct<Subscribe>(
          s(), s(), any_headers(), rc::gen::arbitrary<int>(), any_start(), s(),
          rc::gen::container<model::Script>(any_step()), rc::gen::arbitrary<bool>())),
      rc::gen::construct<Op>(rc::gen::construct<SubscribePull>(
          s(), s(), any_headers(), millis(), rc::gen::arbitrary<int>(), any_start())),
      rc::gen::construct<Op>(rc::gen::construct<Unsubscribe>(s(), s())),
      rc::gen::construct<Op>(rc::gen::construct<Seek>(s(), s(), offset())),
      rc::gen::construct<Op>(rc::gen::just(Drain{})),
      rc::gen::construct<Op>(
          rc::gen::construct<Poll>(s(), s(), s(), rc::gen::arbitrary<std::size_t>())),
      rc::gen::construct<Op>(
          with_which(rc::gen::construct<Ack>(s(), s(), offset(), s()), in_program)),
      rc::gen::construct<Op>(
          with_which(rc::gen::construct<Nack>(s(), s(), offset(), s()), in_program)),
      rc::gen::construct<Op>(
          with_which(rc::gen::construct<Extend>(s(), s(), offset(), s(), millis()), in_program)),
      rc::gen::construct<Op>(rc::gen::just(Expire{})),
      rc::gen::construct<Op>(rc::gen::construct<Advance>(millis())),
      rc::gen::construct<Op>(rc::gen::construct<GetStats>(s(), s())),
      rc::gen::construct<Op>(rc::gen::construct<GetDeadLetters>(s(), s())),
      rc::gen::construct<Op>(rc::gen::construct<Yield>(rc::gen::arbitrary<std::size_t>())),
      rc::gen::construct<Op>(rc::gen::construct<Subscriptions>(s())),
      rc::gen::construct<Op>(rc::gen::just(Topics{})),
      rc::gen::construct<Op>(
          rc::gen::construct<PollWait>(s(), s(), s(), rc::gen::arbitrary<std::size_t>(), millis())),
      rc::gen::construct<Op>(rc::gen::construct<WaitIdle>(millis())),
      rc::gen::construct<Op>(rc::gen::construct<WaitDelivered>(millis())),
      rc::gen::construct<Op>(rc::gen::construct<EndOffset>(s())),
      rc::gen::construct<Op>(rc::gen::construct<OldestOffset>(s())),
      rc::gen::construct<Op>(
          rc::gen::apply(
              [](int call, std::uint32_t nth, bool enospc) {
                Fault f;
                f.call = static_cast<IoCall>(call);
                f.nth = nth;
                f.error = enospc ? DiskError::kEnospc : DiskError::kEio;
                return f;
              },
              rc::gen::inRange(0, 7), rc::gen::inRange<std::uint32_t>(1, 1001),
              rc::gen::arbitrary<bool>())));
}

// A broker line: only the knobs of its dispatcher differ from their defaults (print() writes
// non-default knobs only, and parse_program() refuses a knob its dispatcher does not have).
rc::Gen<oplang::BrokerSpec> any_broker() {
  using D = oplang::BrokerSpec::Dispatcher;
  return rc::gen::apply(
      [](int kind, std::size_t threads, model::Millis timeout, model::Millis backoff) {
        oplang::BrokerSpec b;
        b.dispatcher = static_cast<D>(kind);
        if (b.dispatcher == D::kPool) {
          b.threads = threads;
          b.timeout = timeout;
        }
        if (b.dispatcher != D::kSynchronous) b.backoff = backoff;
        return b;
      },
      rc::gen::inRange(0, 3), rc::gen::inRange<std::size_t>(1, 1000),
      rc::gen::inRange<model::Millis>(0, std::numeric_limits<model::Millis>::max()),
      rc::gen::inRange<model::Millis>(0, std::numeric_limits<model::Millis>::max()));
}

// A sync policy of a durable broker line (every(MS): 1 to 1000000 ms).
rc::Gen<oplang::SyncPolicy> any_policy() {
  using K = oplang::SyncPolicy::Kind;
  return rc::gen::apply(
      [](int kind, model::Millis every) {
        const K k = static_cast<K>(kind);
        return oplang::SyncPolicy{k, k == K::kEvery ? every : 0};
      },
      rc::gen::inRange(0, 3), rc::gen::inRange<model::Millis>(1, 1000001));
}

// A broker line, durable or not (any pair of policies).
rc::Gen<oplang::BrokerSpec> any_broker_line() {
  return rc::gen::apply(
      [](oplang::BrokerSpec b, bool durable, oplang::SyncPolicy publish,
         oplang::SyncPolicy commit) {
        if (durable) {
          b.durable = true;
          b.publish_sync = publish;
          b.commit_sync = commit;
        }
        return b;
      },
      any_broker(), rc::gen::arbitrary<bool>(), any_policy(), any_policy());
}

rc::Gen<oplang::Program> any_program() {
  auto script = rc::gen::container<oplang::Script>(any_op(true));
  auto fiber = rc::gen::construct<oplang::Fiber>(any_string(), script);
  auto fibers = rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 4), [fiber](std::size_t n) {
    return rc::gen::container<std::vector<oplang::Fiber>>(n, fiber);
  });
  return rc::gen::construct<oplang::Program>(any_broker_line(), script, fibers);
}

RC_GTEST_PROP(TextPropertyTest, RoundTripOfArbitraryScripts, ()) {
  const auto script = *rc::gen::container<oplang::Script>(any_op());
  const std::string text = oplang::print(script);
  RC_ASSERT(oplang::parse(text) == script);
}

RC_GTEST_PROP(TextPropertyTest, RoundTripOfArbitraryPrograms, ()) {
  const auto program = *any_program();
  const std::string text = oplang::print(program);
  RC_ASSERT(oplang::parse_program(text) == program);
}

RC_GTEST_PROP(TextPropertyTest, ParseOfArbitraryTextAsAProgramEndsInOneOrParseError,
              (std::string text)) {
  for (const std::string& candidate : {text, "broker lane\n" + text}) {
    try {
      const oplang::Program program = oplang::parse_program(candidate);
      RC_ASSERT(oplang::parse_program(oplang::print(program)) == program);
    } catch (const oplang::ParseError& e) {
      RC_ASSERT(e.line() >= 1u);
      RC_ASSERT(e.column() >= 1u);
    }
  }
}

RC_GTEST_PROP(TextPropertyTest, ParseOfArbitraryTextEndsInOpsOrParseError, (std::string text)) {
  try {
    const oplang::Script script = oplang::parse(text);
    RC_ASSERT(oplang::parse(oplang::print(script)) == script);
  } catch (const oplang::ParseError& e) {
    RC_ASSERT(e.line() >= 1u);
    RC_ASSERT(e.column() >= 1u);
  }
}

}  // namespace
