// Property: parse(print(op)) == op for arbitrary ops, and parse never crashes.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

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
         int verdict) {
        Step s;
        s.effect = static_cast<EffectKind>(effect);
        if (s.effect == EffectKind::kUnsubscribe || s.effect == EffectKind::kPublish ||
            s.effect == EffectKind::kSeek) {
          s.topic = topic;
        }
        if (s.effect == EffectKind::kUnsubscribe || s.effect == EffectKind::kSeek) s.name = name;
        if (s.effect == EffectKind::kPublish) s.payload = payload;
        if (s.effect == EffectKind::kSeek) s.offset = offset;
        s.verdict = static_cast<Verdict>(verdict);
        return s;
      },
      rc::gen::inRange(0, 6), any_string(), any_string(), any_string(),
      rc::gen::arbitrary<model::Offset>(), rc::gen::inRange(0, 4));
}

rc::Gen<oplang::Op> any_op() {
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
          rc::gen::container<model::Script>(any_step()))),
      rc::gen::construct<Op>(rc::gen::construct<SubscribePull>(
          s(), s(), any_headers(), millis(), rc::gen::arbitrary<int>(), any_start())),
      rc::gen::construct<Op>(rc::gen::construct<Unsubscribe>(s(), s())),
      rc::gen::construct<Op>(rc::gen::construct<Seek>(s(), s(), offset())),
      rc::gen::construct<Op>(rc::gen::just(Drain{})),
      rc::gen::construct<Op>(
          rc::gen::construct<Poll>(s(), s(), s(), rc::gen::arbitrary<std::size_t>())),
      rc::gen::construct<Op>(rc::gen::construct<Ack>(s(), s(), offset(), s())),
      rc::gen::construct<Op>(rc::gen::construct<Nack>(s(), s(), offset(), s())),
      rc::gen::construct<Op>(rc::gen::construct<Extend>(s(), s(), offset(), s(), millis())),
      rc::gen::construct<Op>(rc::gen::just(Expire{})),
      rc::gen::construct<Op>(rc::gen::construct<Advance>(millis())),
      rc::gen::construct<Op>(rc::gen::construct<GetStats>(s(), s())),
      rc::gen::construct<Op>(rc::gen::construct<GetDeadLetters>(s(), s())));
}

RC_GTEST_PROP(TextPropertyTest, RoundTripOfArbitraryScripts, ()) {
  const auto script = *rc::gen::container<oplang::Script>(any_op());
  const std::string text = oplang::print(script);
  RC_ASSERT(oplang::parse(text) == script);
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
