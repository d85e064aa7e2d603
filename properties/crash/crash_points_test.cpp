// SPEC R19/R20 under power cuts: scripts on a durable broker over the simulated disk, the
// disk dying at one write or sync, and the broker opened on what survived compared with
// what the model allows (crash_points.h). The random property picks the point; the
// exhaustive test crashes short scripts at every point in turn (the CrashMonkey / ALICE
// idea). A failure prints the case and the line that replays it:
//   CRASH_REPLAY=FILE build/default/properties/crash_points_test
//     --gtest_filter=CrashPoints.ReplayFromFile  (one line)
#include "crash_points.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "op_generators.h"
#include "oplang/text.h"
#include "uniform.h"

namespace props::crash {
namespace {

using GenOp = oplang::Op (*)(const Hints&);

/// Crash scripts: the durable delivery mix, with handler scripts of verdicts only (an
/// effect inside a handler writes records of its own, between an offer and its commit).
oplang::Script gen_crash_script(std::size_t max_steps) {
  static const std::vector<GenOp> mix = {
      &gen_op<oplang::Publish>,       &gen_op<oplang::Publish>,       &gen_op<oplang::Publish>,
      &gen_op<oplang::Publish>,       &gen_op<oplang::Subscribe>,     &gen_op<oplang::Subscribe>,
      &gen_op<oplang::SubscribePull>, &gen_op<oplang::SubscribePull>, &gen_op<oplang::Drain>,
      &gen_op<oplang::Drain>,         &gen_op<oplang::Drain>,         &gen_op<oplang::Poll>,
      &gen_op<oplang::Poll>,          &gen_op<oplang::Poll>,          &gen_op<oplang::Ack>,
      &gen_op<oplang::Ack>,           &gen_op<oplang::Ack>,           &gen_op<oplang::Nack>,
      &gen_op<oplang::Expire>,        &gen_op<oplang::Advance>,       &gen_op<oplang::Seek>,
      &gen_op<oplang::Unsubscribe>,   &gen_op<oplang::CreateTopic>,   &gen_op<oplang::DeleteTopic>};
  oplang::Script script = {oplang::CreateTopic{"t0", 0, 0}, oplang::CreateTopic{"t1", 3, 0}};
  Hints hints;
  for (const auto& op : script) hints.observe(op);
  // Uniform whatever the size (uniform.h), so long scripts are as likely as
  // short ones; shrinking still goes towards one step.
  const std::size_t steps = *props::uniform_in<std::size_t>(1, max_steps + 1);
  for (std::size_t i = 0; i < steps; ++i) {
    oplang::Op op = mix[*props::uniform_in<std::size_t>(0, mix.size())](hints);
    // Mostly from the beginning, so consumers find messages and commit (the generators'
    // default start, the end, leaves a short script with little to confirm).
    const bool from_beginning = !props::one_in(4);
    const model::Start beginning{model::Start::Kind::kBeginning, 0};
    if (auto* s = std::get_if<oplang::Subscribe>(&op)) {
      for (auto& step : s->script) {
        model::Step plain;
        plain.verdict = step.verdict;
        step = plain;
      }
      if (from_beginning && s->group.empty()) s->start = beginning;
    }
    if (auto* s = std::get_if<oplang::SubscribePull>(&op); s != nullptr && from_beginning) {
      s->start = beginning;
    }
    hints.observe(op);
    script.push_back(std::move(op));
  }
  return script;
}

/// A crash point spread over the ops that write (an op with many points, such as the first
/// publish to a topic, is not chosen more often than an ack), those that consume or move
/// a position weighted four times (they are rarer in a script, and write the commits),
/// then over that op's points.
std::uint64_t gen_point(const oplang::Script& script, bool always) {
  const std::vector<std::uint64_t> ends = points_per_op(script, always);
  std::vector<std::size_t> writers;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] == (i == 0 ? 0 : ends[i - 1])) continue;
    const bool setup = std::holds_alternative<oplang::Publish>(script[i]) ||
                       std::holds_alternative<oplang::CreateTopic>(script[i]) ||
                       std::holds_alternative<oplang::Subscribe>(script[i]) ||
                       std::holds_alternative<oplang::SubscribePull>(script[i]);
    writers.insert(writers.end(), setup ? 1 : 4, i);
  }
  if (writers.empty()) return 0;
  const std::size_t op = writers[*props::uniform_in<std::size_t>(0, writers.size())];
  const std::uint64_t first = op == 0 ? 0 : ends[op - 1];
  return first + *props::uniform_in<std::uint64_t>(0, ends[op] - first);
}

void check(const CrashCase& c) {
  const Verdict v = run_case(c);
  if (!v.failure.empty()) RC_FAIL(v.failure);
  RC_TAG(v.crashed ? "crashed" : "ended before the point");
  if (v.crashed) {
    const std::string text = oplang::print(c.script[v.op]);
    RC_TAG("in " + text.substr(0, text.find(' ')));
  }
}

RC_GTEST_PROP(CrashPoints, ACrashAtAnyWriteOrSyncLosesNothingThatReturned, ()) {
  CrashCase c;
  c.script = gen_crash_script(24);
  c.point = gen_point(c.script, true);
  c.seed = *props::uniform_in<std::uint64_t>(0, 1000);
  check(c);
}

RC_GTEST_PROP(CrashPoints, ACrashWithoutFsyncKeepsAPrefixOfEachLog, ()) {
  CrashCase c;
  c.always = false;
  c.script = gen_crash_script(24);
  c.point = gen_point(c.script, false);
  c.seed = *props::uniform_in<std::uint64_t>(0, 1000);
  check(c);
}

// R33: the disk fails one call (EIO, or ENOSPC: half an append written) and the script
// goes on: that call throws IoError and is undecided, every later call throws IoError, and a
// clean restart finds a state the failed call may have left.
RC_GTEST_PROP(CrashPoints, AFailedWriteOrSyncIsUndecidedAndRefusesEveryLaterCall, ()) {
  CrashCase c;
  c.fault = props::one_in(2) ? CrashCase::Fault::kEio : CrashCase::Fault::kEnospc;
  c.script = gen_crash_script(24);
  c.point = gen_point(c.script, true);
  check(c);
}

/// Short scripts that between them write every kind of record: topics created and
/// deleted, segments rolled and dropped by retention, subscribes, commits of pull and
/// push subscriptions, dead letters, a seek, and a journal compaction.
const std::vector<std::string> kShortScripts = {
    "create_topic t\npublish t a\npublish t b\nsubscribe_pull t p start=begin\n"
    "poll t p w max=2\nack t p 1 w\nack t p 0 w\n",
    "create_topic t messages=2\nsubscribe t s max=2 start=begin script=[reject,reject,confirm]\n"
    "publish t m0\npublish t m1\npublish t m2\ndrain\ndrain\ndrain\n",
    "create_topic t\nsubscribe_pull t p timeout=10 max=1\npublish t x\npoll t p w\nadvance 10\n"
    "expire\nseek t p 0\npoll t p w\nnack t p 0 w\nunsubscribe t p\ndelete_topic t\n"
    "create_topic t\npublish t y\n",
    "create_topic t\nsubscribe_pull t p\npublish t \"a longer payload that fills a segment\"\n"
    "publish t \"another longer payload, so the segment rolls\"\npoll t p w max=5\nack t p 0 w\n"
    "ack t p 1 w\nsubscribe t s group=g start=begin\ndrain\n",
};

TEST(CrashPoints, EveryPointOfShortScriptsRecoversToAnAllowedState) {
  std::size_t cases = 0;
  std::size_t crashed = 0;
  for (const bool always : {true, false}) {
    for (const std::string& text : kShortScripts) {
      CrashCase c;
      c.always = always;
      c.script = oplang::parse(text);
      const std::uint64_t points = count_points(c.script, always);
      for (std::uint64_t p = 0; p < points; ++p) {
        for (std::uint64_t seed : {0, 1, 2, 3}) {
          c.point = p;
          c.seed = seed;
          const Verdict v = run_case(c);
          ++cases;
          crashed += v.crashed ? 1 : 0;
          ASSERT_TRUE(v.failure.empty()) << v.failure;
        }
      }
    }
  }
  EXPECT_EQ(crashed, cases) << "every point below the count must crash the script";
  std::printf("crash points: %zu cases checked\n", cases);
}

// Every I/O call of the short scripts, failed in turn with EIO and with ENOSPC (R33).
TEST(CrashPoints, EveryErrorPointOfShortScriptsLeavesAnAllowedState) {
  std::size_t cases = 0;
  std::size_t fired = 0;
  for (const std::string& text : kShortScripts) {
    CrashCase c;
    c.script = oplang::parse(text);
    const std::uint64_t points = count_points(c.script, true);
    for (std::uint64_t p = 0; p < points; ++p) {
      for (const auto fault : {CrashCase::Fault::kEio, CrashCase::Fault::kEnospc}) {
        c.point = p;
        c.fault = fault;
        const Verdict v = run_case(c);
        ++cases;
        fired += v.crashed ? 1 : 0;
        ASSERT_TRUE(v.failure.empty()) << v.failure;
      }
    }
  }
  EXPECT_EQ(fired, cases) << "every point below the count must fail a call of the script";
  std::printf("error points: %zu cases checked\n", cases);
}

TEST(CrashPoints, ReplayFromFile) {
  const char* file = std::getenv("CRASH_REPLAY");
  if (file == nullptr) GTEST_SKIP() << "set CRASH_REPLAY=FILE (a case a failure printed)";
  std::ifstream in(file);
  ASSERT_TRUE(in) << "cannot read " << file;
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  const std::optional<CrashCase> c = parse_case(text.str(), error);
  ASSERT_TRUE(c) << file << ": " << error;
  const Verdict v = run_case(*c);
  EXPECT_TRUE(v.crashed) << "the script ends before point " << c->point;
  EXPECT_TRUE(v.failure.empty()) << v.failure;
}

}  // namespace
}  // namespace props::crash
