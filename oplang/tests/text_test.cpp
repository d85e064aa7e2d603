// The text form: printing, parsing, round trips and parse errors with line and column.
#include "oplang/text.h"

#include <gtest/gtest.h>

namespace oplang {
namespace {

ParseError error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed: " << text;
  return ParseError(0, 0, "");
}

TEST(TextTest, ParsesTheBriefExamples) {
  const Script s = parse(
      "# comment line\n"
      "publish orders \"order-1\" type=created   # trailing comment\n"
      "\n"
      "subscribe orders billing max=3 start=begin script=[throw,confirm]\n"
      "poll orders billing w1 max=2\n"
      "advance 30000\n");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], Op(Publish{"orders", "order-1", {{"type", "created"}}, ""}));
  Subscribe sub{"orders", "billing", {}, 3, Start{Start::Kind::kBeginning, 0}, "", {}};
  sub.script = {model::Step{.verdict = model::Verdict::kThrowStd}, model::Step{}};
  EXPECT_EQ(s[1], Op(sub));
  EXPECT_EQ(s[2], Op(Poll{"orders", "billing", "w1", 2}));
  EXPECT_EQ(s[3], Op(Advance{30000}));
}

TEST(TextTest, PrintsCanonicalLines) {
  Subscribe sub{"t", "s", {{"a", "b c"}}, 0, Start{Start::Kind::kOffset, 4}, "g", {}};
  sub.script = {model::Step{.effect = model::EffectKind::kSeek,
                            .topic = "t",
                            .name = "s",
                            .offset = 0,
                            .verdict = model::Verdict::kReject},
                model::Step{.effect = model::EffectKind::kUnsubscribeSelf}};
  EXPECT_EQ(print(sub),
            "subscribe t s filter=[a=\"b c\"] max=0 start=4 group=g "
            "script=[seek(t,s,0)+reject,unsubscribe]");
  EXPECT_EQ(print(Publish{"t", "", {}, "k\n"}), "publish t \"\" key:\"k\\n\"");
  EXPECT_EQ(print(Extend{"t", "s", 3, "w", -5}), "extend t s 3 w -5");
}

TEST(TextTest, RoundTripsEveryOpKind) {
  const Script all = {
      CreateTopic{"t", 3, 100},
      DeleteTopic{"t"},
      Publish{"t", "p \"q\" \\ \x01\xff", {{"key", "v"}, {"x y", ""}}, "k"},
      Subscribe{"t",
                "s",
                {{"h", "1"}},
                7,
                Start{Start::Kind::kBeginning, 0},
                "g",
                {model::Step{.effect = model::EffectKind::kPublish, .topic = "t", .payload = "x"},
                 model::Step{.effect = model::EffectKind::kUnsubscribe,
                             .topic = "a",
                             .name = "b",
                             .verdict = model::Verdict::kThrowOther},
                 model::Step{.effect = model::EffectKind::kDrain}}},
      SubscribePull{"t", "p", {}, 10, 0, Start{Start::Kind::kOffset, 2}},
      Unsubscribe{"t", "s"},
      Seek{"t", "s", 9},
      Drain{},
      Poll{"t", "p", "w", 0},
      Ack{"t", "p", 1, "w"},
      Nack{"t", "p", 2, "w"},
      Extend{"t", "p", 3, "w", 100},
      Expire{},
      Advance{5},
      GetStats{"t", "s"},
      GetDeadLetters{"t", "s"},
  };
  EXPECT_EQ(parse(print(all)), all);
}

TEST(TextTest, ErrorsCarryLineColumnAndExpectation) {
  ParseError e = error_of("drain\nfrobnicate x\n");
  EXPECT_EQ(e.line(), 2u);
  EXPECT_EQ(e.column(), 1u);
  EXPECT_NE(e.expected().find("an operation"), std::string::npos);

  e = error_of("publish orders");
  EXPECT_EQ(e.line(), 1u);
  EXPECT_EQ(e.column(), 15u);
  EXPECT_EQ(e.expected(), "a payload");
  EXPECT_STREQ(e.what(), "1:15: expected a payload");

  e = error_of("seek t s -1");
  EXPECT_EQ(e.column(), 10u);
  EXPECT_EQ(e.expected(), "an offset");

  e = error_of("publish t \"open");
  EXPECT_EQ(e.expected(), "closing quote");
  EXPECT_EQ(e.column(), 16u);  // just past the end of the line

  e = error_of("subscribe t s script=[confirm,explode]");
  EXPECT_EQ(e.column(), 31u);

  e = error_of("subscribe t s colour=red");
  EXPECT_EQ(e.expected(), "filter=, max=, start=, group= or script=");

  e = error_of("drain now");
  EXPECT_EQ(e.expected(), "end of line");
  EXPECT_EQ(e.column(), 7u);

  e = error_of("publish t {x}");
  EXPECT_EQ(e.column(), 11u);

  e = error_of("publish t \"\\q\"");
  EXPECT_EQ(e.column(), 13u);

  e = error_of("poll t s w max=99999999999999999999999");
  EXPECT_EQ(e.expected(), "a message count");
}

TEST(TextTest, NeverCrashesOnTruncations) {
  const std::string text =
      "subscribe t s filter=[a=b] max=2 start=begin group=g script=[publish(t,\"x\")+throw42]";
  EXPECT_EQ(print(parse(text).at(0)), text.substr(0, 21) +
                                          "[a=b] max=2 start=begin group=g "
                                          "script=[publish(t,x)+throw42]");
  for (std::size_t n = 0; n < text.size(); ++n) {
    try {
      parse(text.substr(0, n));
    } catch (const ParseError&) {
    }
  }
}

}  // namespace
}  // namespace oplang
