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
      Yield{},
      Yield{3},
      Subscriptions{"t"},
      Topics{},
      Subscribe{
          "t",
          "s",
          {},
          5,
          Start{},
          "",
          {model::Step{.effect = model::EffectKind::kStall, .ms = 20},
           model::Step{
               .effect = model::EffectKind::kStall, .verdict = model::Verdict::kReject, .ms = 0}}},
      PollWait{"t", "p", "w", 0, 0},
      PollWait{"t", "p", "", 3, -1},
      WaitIdle{},
      WaitIdle{250},
      WaitDelivered{},
      WaitDelivered{-3},
      Subscribe{"t", "s", {}, 5, Start{}, "g", {}, true},
      EndOffset{"t"},
      OldestOffset{"t"},
  };
  EXPECT_EQ(parse(print(all)), all);
}

TEST(TextTest, EndOffsetAndOldestOffsetNameATopic) {
  const Script s = parse("end_offset orders\noldest_offset \"a b\"\n");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], Op(EndOffset{"orders"}));
  EXPECT_EQ(s[1], Op(OldestOffset{"a b"}));
  EXPECT_EQ(print(s[0]), "end_offset orders");
  EXPECT_EQ(print(s[1]), "oldest_offset \"a b\"");
  EXPECT_EQ(error_of("end_offset").expected(), "a topic");
  EXPECT_EQ(error_of("oldest_offset").expected(), "a topic");
  EXPECT_EQ(error_of("end_offset t extra").expected(), "end of line");
}

TEST(TextTest, PollWaitWaitsAndIdempotentSubscribes) {
  const Script s = parse(
      "poll_wait orders billing w1 max=2 timeout=5\n"
      "poll_wait orders billing w1\n"
      "wait_idle timeout=1\n"
      "wait_delivered\n"
      "subscribe orders billing group=g idempotent script=[reject]\n"
      "subscribe orders billing idempotent\n");
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0], Op(PollWait{"orders", "billing", "w1", 2, 5}));
  EXPECT_EQ(s[1], Op(PollWait{"orders", "billing", "w1", 1, 0}));
  EXPECT_EQ(s[2], Op(WaitIdle{1}));
  EXPECT_EQ(s[3], Op(WaitDelivered{0}));
  Subscribe sub{"orders", "billing", {}, 5, Start{}, "g", {}, true};
  sub.script = {model::Step{.verdict = model::Verdict::kReject}};
  EXPECT_EQ(s[4], Op(sub));
  EXPECT_EQ(s[5], Op(Subscribe{"orders", "billing", {}, 5, Start{}, "", {}, true}));
  // Canonical lines: only non-default options, the flag before the script.
  EXPECT_EQ(print(s[0]), "poll_wait orders billing w1 max=2 timeout=5");
  EXPECT_EQ(print(s[1]), "poll_wait orders billing w1");
  EXPECT_EQ(print(s[2]), "wait_idle timeout=1");
  EXPECT_EQ(print(s[3]), "wait_delivered");
  EXPECT_EQ(print(s[4]), "subscribe orders billing group=g idempotent script=[reject]");
  EXPECT_EQ(print(PollWait{"t", "p", "", 0, 0}), "poll_wait t p \"\" max=0");

  EXPECT_EQ(error_of("wait_idle timeout").expected(), "'='");
  EXPECT_EQ(error_of("wait_delivered max=1").expected(), "timeout=");
  EXPECT_EQ(error_of("poll_wait t p w timeout=x").expected(), "a timeout in ms");
  EXPECT_EQ(error_of("poll_wait t p w colour=1").expected(), "max= or timeout=");
  EXPECT_EQ(error_of("subscribe t s idempotent idempotent").expected(), "'='");
  EXPECT_EQ(error_of("subscribe t s idempotent=1").column(), 25u);
}

ParseError program_error_of(std::string_view text) {
  try {
    parse_program(text);
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed: " << text;
  return ParseError(0, 0, "");
}

TEST(TextTest, ParsesAndPrintsAProgram) {
  const std::string text =
      "# a comment before the broker line\n"
      "broker pool threads=3 timeout=50\n"
      "create_topic t\n"
      "subscribe t s0 max=3 script=[reject,stall(20)+confirm,throw]\n"
      "fiber pub0\n"
      "  publish t m0      # in a fiber\n"
      "\n"
      "fiber w0\n"
      "\tpoll t p w0 max=2\n"
      "  ack t p oldest w0\n"
      "  nack t p all w0\n"
      "  extend t p oldest w0 10\n"
      "  advance 20\n"
      "fiber \"un sub\"\n"
      "  yield 3\n"
      "  unsubscribe t s1\n";
  const Program p = parse_program(text);
  EXPECT_EQ(p.broker.dispatcher, BrokerSpec::Dispatcher::kPool);
  EXPECT_EQ(p.broker.threads, 3u);
  EXPECT_EQ(p.broker.timeout, 50);
  EXPECT_EQ(p.broker.backoff, 5);
  ASSERT_EQ(p.setup.size(), 2u);
  Subscribe sub{"t", "s0", {}, 3, Start{}, "", {}};
  sub.script = {model::Step{.verdict = model::Verdict::kReject},
                model::Step{.effect = model::EffectKind::kStall, .ms = 20},
                model::Step{.verdict = model::Verdict::kThrowStd}};
  EXPECT_EQ(p.setup[1], Op(sub));
  ASSERT_EQ(p.fibers.size(), 3u);
  EXPECT_EQ(p.fibers[0], (Fiber{"pub0", {Publish{"t", "m0", {}, ""}}}));
  EXPECT_EQ(p.fibers[1].ops.at(1), Op(Ack{"t", "p", 0, "w0", Which::kOldest}));
  EXPECT_EQ(p.fibers[1].ops.at(2), Op(Nack{"t", "p", 0, "w0", Which::kAll}));
  EXPECT_EQ(p.fibers[1].ops.at(3), Op(Extend{"t", "p", 0, "w0", 10, Which::kOldest}));
  EXPECT_EQ(p.fibers[2].name, "un sub");
  EXPECT_EQ(p.fibers[2].ops.at(0), Op(Yield{3}));
  EXPECT_EQ(print(p),
            "broker pool threads=3 timeout=50\n"
            "create_topic t\n"
            "subscribe t s0 max=3 script=[reject,stall(20),throw]\n"
            "fiber pub0\n"
            "  publish t m0\n"
            "fiber w0\n"
            "  poll t p w0 max=2\n"
            "  ack t p oldest w0\n"
            "  nack t p all w0\n"
            "  extend t p oldest w0 10\n"
            "  advance 20\n"
            "fiber \"un sub\"\n"
            "  yield 3\n"
            "  unsubscribe t s1\n");
  EXPECT_EQ(parse_program(print(p)), p);
  EXPECT_EQ(print(parse_program("broker sync\n")), "broker sync\n");
  EXPECT_EQ(print(parse_program("broker lane backoff=0\n")), "broker lane backoff=0\n");
}

// A durable broker line (R19's policies) prints only what is not the default and reads
// back equal; a policy that is not always, none or every(MS >= 1) is a ParseError there.
TEST(TextTest, DurableBrokerLinesRoundTripAndRefuseBadPolicies) {
  const Program p =
      parse_program("broker pool threads=3 durable publish_sync=every(20) commit_sync=none\n");
  EXPECT_TRUE(p.broker.durable);
  EXPECT_EQ(p.broker.threads, 3u);
  EXPECT_EQ(p.broker.publish_sync, (SyncPolicy{SyncPolicy::Kind::kEvery, 20}));
  EXPECT_EQ(p.broker.commit_sync, (SyncPolicy{SyncPolicy::Kind::kNone, 0}));
  EXPECT_EQ(parse_program(print(p)), p);
  EXPECT_EQ(print(parse_program("broker sync durable publish_sync=always\n")),
            "broker sync durable\n");
  EXPECT_EQ(program_error_of("broker sync durable publish_sync=sometimes\n").expected(),
            "always, none or every(MS)");
  EXPECT_EQ(program_error_of("broker sync durable commit_sync=every(0)\n").expected(),
            "an interval in ms >= 1");
  EXPECT_EQ(program_error_of("broker lane durable shutdown\n").expected(),
            "publish_sync=, commit_sync= or end of line");
}

// R17: any dispatcher may expire by itself; the period is a positive number of ms, once.
TEST(TextTest, AutoExpireBrokerLinesRoundTripAndRefuseBadPeriods) {
  const Program p = parse_program("broker lane shutdown auto_expire=40 durable\n");
  EXPECT_EQ(p.broker.auto_expire, 40);
  EXPECT_TRUE(p.broker.durable);
  EXPECT_EQ(print(p), "broker lane shutdown auto_expire=40 durable\n");
  EXPECT_EQ(parse_program(print(p)), p);
  EXPECT_EQ(parse_program("broker sync auto_expire=7\n").broker.auto_expire, 7);
  EXPECT_EQ(program_error_of("broker sync auto_expire=0\n").expected(),
            "an expiry period in ms >= 1");
  EXPECT_EQ(program_error_of("broker sync auto_expire=5 auto_expire=6\n").expected(),
            "clock=, auto_expire=, durable or end of line");
}

// R28: `clock=manual` makes `advance` move the broker's clock (back too) instead of sleeping.
TEST(TextTest, ManualClockBrokerLinesRoundTripAndRefuseOtherClocks) {
  const Program p =
      parse_program("broker pool clock=manual auto_expire=9\nfiber f\n  advance -5\n");
  EXPECT_TRUE(p.broker.manual_clock);
  EXPECT_EQ(print(p), "broker pool clock=manual auto_expire=9\nfiber f\n  advance -5\n");
  EXPECT_EQ(parse_program(print(p)), p);
  EXPECT_EQ(program_error_of("broker sync clock=steady\n").expected(), "manual");
}

// R21: a crash may carry damage at rest, after its seed or before it; anything else after
// `crash` is a ParseError naming what may come.
TEST(TextTest, CrashesWithDamageRoundTripAndRefuseOtherWords) {
  const Script s = parse("crash seed=3 corrupt\ncrash truncate seed=9\ncrash\n");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(std::get<Crash>(s[0]), (Crash{3, Damage::kCorrupt}));
  EXPECT_EQ(std::get<Crash>(s[1]), (Crash{9, Damage::kTruncate}));
  EXPECT_EQ(std::get<Crash>(s[2]), Crash{});
  EXPECT_EQ(print(s), "crash seed=3 corrupt\ncrash seed=9 truncate\ncrash\n");
  EXPECT_EQ(error_of("crash seed=3 melt\n").expected(), "seed=, truncate, corrupt or end of line");
  EXPECT_EQ(error_of("crash corrupt truncate\n").expected(),
            "seed=, truncate, corrupt or end of line");
}

// R20: resubscribe takes the saved options, so its line names none of them.
TEST(TextTest, ResubscribeRoundTripsAndTakesNoOptions) {
  const Script s =
      parse("resubscribe orders ship script=[reject]\nresubscribe orders w1 idempotent group=g\n");
  ASSERT_EQ(s.size(), 2u);
  Subscribe ship;
  ship.topic = "orders";
  ship.name = "ship";
  ship.saved = true;
  ship.script = {model::Step{.verdict = model::Verdict::kReject}};
  EXPECT_EQ(s[0], Op(ship));
  Subscribe member;
  member.topic = "orders";
  member.name = "w1";
  member.saved = true;
  member.group = "g";
  member.idempotent = true;
  EXPECT_EQ(s[1], Op(member));
  EXPECT_EQ(print(s),
            "resubscribe orders ship script=[reject]\nresubscribe orders w1 group=g idempotent\n");
  EXPECT_EQ(error_of("resubscribe orders ship max=3\n").expected(),
            "group=, idempotent or script=");
}

TEST(TextTest, ProgramErrorsCarryLineColumnAndExpectation) {
  ParseError e = program_error_of("create_topic t\n");
  EXPECT_EQ(e.line(), 1u);
  EXPECT_EQ(e.column(), 1u);
  EXPECT_NE(e.expected().find("broker"), std::string::npos);

  e = program_error_of("broker turbo\n");
  EXPECT_EQ(e.column(), 8u);
  EXPECT_EQ(e.expected(), "a dispatcher: sync, lane or pool");

  e = program_error_of("broker lane threads=2\n");
  EXPECT_EQ(e.column(), 13u);
  e = program_error_of("broker sync backoff=1\n");
  EXPECT_EQ(e.column(), 13u);
  e = program_error_of("broker pool threads=0\n");
  EXPECT_EQ(e.column(), 21u);

  e = program_error_of("broker lane\nfiber a\n  drain\ndrain\n");
  EXPECT_EQ(e.line(), 4u);
  EXPECT_EQ(e.column(), 1u);
  EXPECT_NE(e.expected().find("an indented op of fiber a"), std::string::npos);

  e = program_error_of("broker lane\n  drain\n");
  EXPECT_EQ(e.line(), 2u);

  e = program_error_of("broker lane\nbroker sync\n");
  EXPECT_EQ(e.line(), 2u);

  e = program_error_of("broker lane\nfiber\n");
  EXPECT_EQ(e.expected(), "a fiber name");

  e = program_error_of("broker lane\nfiber w\n  ack t p newest w\n");
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(e.column(), 11u);
  EXPECT_EQ(e.expected(), "an offset, oldest or all");

  e = program_error_of("broker lane\nsubscribe t s script=[stall]\n");
  EXPECT_EQ(e.expected(), "'('");
}

TEST(TextTest, SequentialScriptsRejectTheMembersHand) {
  for (const char* text : {"ack t p oldest w", "nack t p all w", "extend t p oldest w 5"}) {
    const ParseError e = error_of(text);
    EXPECT_EQ(e.line(), 1u) << text;
    EXPECT_NE(e.expected().find("fiber programs only"), std::string::npos) << text;
  }
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

  e = error_of("subscribe_pull t p backoff=[]");
  EXPECT_EQ(e.expected(), "a wait in ms (for no back-off leave backoff= out)");

  e = error_of("subscribe t s colour=red");
  EXPECT_EQ(e.expected(),
            "filter=, max=, start=, group=, idempotent, durable_attempts, script= or backoff=");

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

TEST(TextTest, SeveralProgramsSplitAtEachBrokerLineAndRoundTrip) {
  const std::string text =
      "# two brokers\nbroker lane shutdown\ncreate_topic t\nfiber f\n  publish t m\n"
      "broker sync\ncreate_topic u\n";
  const std::vector<Program> programs = parse_programs(text);
  ASSERT_EQ(programs.size(), 2u);
  EXPECT_TRUE(programs[0].broker.shutdown);
  EXPECT_EQ(programs[0].fibers.size(), 1u);
  EXPECT_EQ(programs[1].broker.dispatcher, BrokerSpec::Dispatcher::kSynchronous);
  EXPECT_EQ(parse_programs(print(programs)), programs);
  // Errors count lines from the top of the whole text.
  try {
    parse_programs("broker sync\nbroker lane\nnope\n");
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3u) << e.what();
  }
}

}  // namespace
}  // namespace oplang
