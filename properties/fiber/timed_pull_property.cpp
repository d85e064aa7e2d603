// The timed rules of pull subscriptions judged exactly on virtual time (SPEC R11's
// poll_wait, R17's automatic expiry; waits.h): generated programs of workers that hold and
// extend under automatic expiry, and poll_waits on a subscription whose filter, key order,
// bound or pause keeps messages from them while a fiber seeks, resumes or unsubscribes it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <system_error>

#include "broker/broker.h"
#include "common.h"
#include "fiber/run.h"
#include "generators.h"
#include "oplang/text.h"
#include "program_runner.h"
#include "programs.h"
#include "simfs/sim_file_system.h"
#include "uniform.h"

namespace fiberprop {
namespace {

RC_GTEST_PROP(FiberTimedPull, WaitsAndAutomaticExpiryKeepTheirDeadlines, ()) {
  const TimedPullScript script = *gen_timed_pull_script();
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  const oplang::Program program = script.program();
  const ProgramRun run = run_program(program, schedule);
  if (!run.ok()) RC_FAIL(failure_text(run, program));
}

// R17 as a user reads it: two workers poll 10 ms apart and never answer; the timer's period
// is longer than the ack timeout, so only "soon after every deadline" returns the second
// message in time for the poll_wait that waits for it (late-expiry otherwise).
TEST(FiberTimedPull, R17EveryDeadlineIsMetNotOnlyTheFirstArmed) {
  const oplang::Program program = oplang::parse_program(R"(broker sync auto_expire=200
create_topic t
subscribe_pull t p timeout=30 max=3 start=begin
publish t a
publish t b
fiber w0
  poll t p w0 max=1
fiber w1
  advance 10
  poll t p w1 max=1
fiber w2
  advance 35
  poll_wait t p w2 max=1 timeout=30
  ack t p all w2
  poll_wait t p w2 max=1 timeout=30
  ack t p all w2
)");
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const fiber::Schedule schedule = fiber::Schedule::random(seed);
    const ProgramRun run = run_program(program, schedule);
    ASSERT_EQ(run.failures, "") << failure_report(run, program);
    ASSERT_NE(run.checked.find("late-expiry"), std::string::npos) << run.checked;
    // w2 got offset 0 back at once (t=35), then waited for offset 1 until its deadline, t=40.
    ASSERT_NE(run.history.find("poll_wait t p w2 timeout=30 -> [1#2"), std::string::npos)
        << run.history;
  }
}

// R17 with R33: on a durable broker whose store failed, a held message whose deadline then
// passes is dead-lettered by the timer, and its commit meets the failed store. The timer's
// thread must not die of that IoError (an exception escaping it ends the process); the
// failure stays the store's, reported by every call.
TEST(FiberTimedPull, R33TheExpiryTimerOutlivesAFailedStore) {
  auto disk = std::make_shared<broker::sim::SimFileSystem>();
  std::string failure;
  const fiber::RunResult run = fiber::run_fibers(
      {[&] {
        broker::StorageOptions storage;
        storage.directory = "/broker";
        storage.file_system = disk;
        broker::Broker b(broker::BrokerOptions::synchronous()
                             .with_auto_expire(broker::Millis{5})
                             .with_storage(storage));
        b.create_topic("t");
        broker::PullOptions options;
        options.ack_timeout = broker::Millis{10};
        options.max_deliveries = 1;
        options.start = broker::StartPosition::beginning();
        b.subscribe_pull("t", "p", options);
        b.publish("t", "m");
        if (b.poll("t", "p", "w", 1, b.clock().now()).size() != 1) failure += "no hand-out; ";
        disk->fail_next(broker::sim::SimFileSystem::Call::kSync, 1, std::errc::io_error);
        try {
          b.publish("t", "m2");
          failure += "the failed sync did not throw; ";
        } catch (const broker::IoError&) {
        }
        fiber::sleep_for(std::chrono::milliseconds(50));  // the deadline passes; the timer runs
        if (!b.storage_failure()) failure += "the store forgot its failure; ";
        try {
          b.expire(b.clock().now());
          failure += "expire after the failure did not throw; ";
        } catch (const broker::IoError&) {
        }
      }},
      fiber::Schedule::random(1));
  EXPECT_TRUE(run.ok()) << run.describe();
  EXPECT_EQ(failure, "");
}

// R28 with publishers racing their clock reads: under `clock=manual` every clock read is a
// scheduling point and a fiber moves the clock back and forth while 1-3 publishers publish,
// so a publisher may append after another that read a later time, and times step back
// along the log. offset_for_time must still answer the lowest offset published at or after
// each time (`seek-by-time`, checked after the run on every message's time).
RC_GTEST_PROP(FiberTimedPull, PublishersRacingTheirClockReadsKeepSeekByTimeRight, ()) {
  const auto publishers = *rc::gen::resize(
      3, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(props::uniform_in(1, 5))));
  const auto moves =
      *rc::gen::resize(6, rc::gen::nonEmpty(rc::gen::container<std::vector<std::int64_t>>(
                              rc::gen::element<std::int64_t>(-30, -5, -1, 1, 5, 30))));
  std::string text =
      "broker sync clock=manual\ncreate_topic t\nsubscribe_pull t p timeout=1000 max=3 "
      "start=begin\n";
  for (std::size_t i = 0; i < publishers.size(); ++i) {
    text += "fiber pub" + std::to_string(i) + "\n";
    for (int k = 0; k < publishers[i]; ++k) text += "  publish t m" + std::to_string(k) + "\n";
  }
  text += "fiber clock\n";
  for (std::int64_t m : moves) text += "  advance " + std::to_string(m) + "\n";
  text += "fiber w0\n  poll t p w0 max=3\n  ack t p all w0\n";
  const oplang::Program program = oplang::parse_program(text);
  const ProgramRun run = run_program(program, pick_schedule(*gen_schedule()));
  if (!run.ok()) RC_FAIL(failure_text(run, program));
  RC_ASSERT(run.checked.find("seek by time") != std::string::npos);
}

// The property reaches what it judges: over generated cases, holds that expire by the timer
// (a later hand-out at the next attempt with no expire call), extends that shorten and
// lengthen a deadline, poll_waits that wait out their timeout on every side option, and
// seeks and unsubscribes that end a wait.
TEST(FiberTimedPull, GeneratedProgramsReachExpiriesExtendsAndEveryKindOfWait) {
  const auto gen = gen_timed_pull_script();
  std::map<std::string, int> reached;
  const std::regex short_extend("extend t p [0-9]+ w[0-9] 1 -> true");
  const std::regex long_extend("extend t p [0-9]+ w[0-9] 60 -> true");
  // A poll_wait on q that returned nothing (it waited its timeout out: early-return checks).
  const std::regex waited_out("poll_wait t q q[0-9] timeout=[0-9]+ -> \\[\\]");
  for (int i = 0; i < 300; ++i) {
    const TimedPullScript script = gen(rc::Random(static_cast<std::uint64_t>(i) + 1), 50).value();
    const oplang::Program program = script.program();
    const ProgramRun run = run_program(program, fiber::Schedule::random(i + 1));
    ASSERT_EQ(run.failures, "") << failure_report(run, program);
    const std::string& h = run.history;
    if (h.find("#2@") != std::string::npos && h.find("poll t p") != std::string::npos)
      ++reached["a redelivery on p"];
    if (std::regex_search(h, short_extend)) ++reached["a short extend"];
    if (std::regex_search(h, long_extend)) ++reached["a long extend"];
    static const char* kSides[] = {"plain", "filter", "ordered", "bounded", "paused"};
    if (std::regex_search(h, waited_out))
      ++reached[std::string("a wait out on a ") + kSides[static_cast<int>(script.side)] + " q"];
    if (h.find("seek t q 0 -> ok") != std::string::npos) ++reached["a seek of q"];
    if (h.find("unsubscribe t q -> true") != std::string::npos) ++reached["an unsubscribe of q"];
    if (h.find("poll_wait t q q0 timeout=45 -> error:unknown_subscription") != std::string::npos)
      ++reached["a wait ended by an unsubscribe"];
  }
  for (const auto& [what, n] : reached) std::printf("%-34s %d of 300\n", what.c_str(), n);
  for (const char* what :
       {"a redelivery on p", "a short extend", "a long extend", "a wait out on a plain q",
        "a wait out on a filter q", "a wait out on a ordered q", "a wait out on a bounded q",
        "a wait out on a paused q", "a seek of q", "an unsubscribe of q",
        "a wait ended by an unsubscribe"})
    EXPECT_GT(reached[what], 0) << what;
}

}  // namespace
}  // namespace fiberprop
