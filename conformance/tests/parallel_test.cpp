// Parallel runs of the kit (conformance/parallel.h): concurrent workers on a target, the
// history judged by the linearizability checker against the profiled model and by the queue
// checkers. The in-process broker holds; a worker that hands out a message another worker
// holds (what a second consumer per worker does) is caught and shrunk; an ack answered but
// not applied and counters off by one are named; JetStream workers sharing one durable hold.
#include "conformance/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "conformance/inproc_target.h"
#include "conformance/jetstream_target.h"
#include "conformance/nats_server.h"
#include "oplang/text.h"

namespace conformance {
namespace {

// Seeds per test: parallel programs are small, the in-process ones cost microseconds.
constexpr std::uint64_t kInProcSeeds = 300;

TEST(ConformanceParallel, InProcWorkersHistoriesLinearizeAndShowNoQueueAnomaly) {
  const ParallelOptions options;
  std::size_t calls = 0;
  for (std::uint64_t seed = 1; seed <= kInProcSeeds; ++seed) {
    const oplang::Program program = generate_parallel(seed, options);
    InProcTarget target;
    const ParallelVerdict v = check_parallel(target, program, strict_profile(), options);
    ASSERT_FALSE(v.void_run) << "seed " << seed;
    ASSERT_TRUE(v.linearizable) << "seed " << seed << "\n" << oplang::print(program) << v.report;
    ASSERT_EQ(v.anomalies, "") << "seed " << seed << "\n" << oplang::print(program);
    ASSERT_FALSE(v.failed());
    calls += v.calls;
  }
  EXPECT_GT(calls, kInProcSeeds * 8);  // setup, fiber calls and settle were all recorded
}

TEST(ConformanceParallel, GeneratedProgramsAreConcurrentPullPrograms) {
  const ParallelOptions options;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const oplang::Program p = generate_parallel(seed, options);
    EXPECT_GE(p.fibers.size(), options.min_fibers);
    EXPECT_LE(p.fibers.size(), options.max_fibers);
    for (const oplang::Fiber& f : p.fibers) {
      EXPECT_FALSE(f.ops.empty());
      EXPECT_LE(f.ops.size(), options.max_ops);
    }
    // The text form replays: what a failure writes is what --replay reads.
    EXPECT_EQ(oplang::parse_program(oplang::print(p)), p) << oplang::print(p);
  }
  EXPECT_NE(generate_parallel(1, options), generate_parallel(2, options));
  EXPECT_EQ(generate_parallel(7, options), generate_parallel(7, options));
}

// A worker that also hands out, once, with its poll's own messages, the last message
// another worker was given: two members hold one message at once.
class DoubleHandingWorker final : public Target {
 public:
  struct Shared {
    std::mutex mu;
    std::optional<model::Received> last;
    std::string last_member;
    bool lied = false;
  };
  DoubleHandingWorker(std::unique_ptr<Target> inner, std::shared_ptr<Shared> shared)
      : inner_(std::move(inner)), shared_(std::move(shared)) {}
  [[nodiscard]] std::string name() const override { return "double-handing worker"; }
  oplang::Outcome step(const oplang::Op& op) override {
    oplang::Outcome out = inner_->step(op);
    const auto* poll = std::get_if<oplang::Poll>(&op);
    auto* got = std::get_if<std::vector<model::Received>>(&out.value);
    if (poll == nullptr || got == nullptr) return out;
    // Whichever poll of another member comes second lies, whatever it got itself: two
    // overlapping polls of two workers are enough, in any order the threads take. (It lied
    // only in place of an empty poll before, which needs all messages taken first: a
    // loaded CI machine ran a shrunk program of four polls 20 times without the lie.)
    std::lock_guard lock(shared_->mu);
    if (shared_->last && shared_->last_member != poll->member && !shared_->lied) {
      got->push_back(*shared_->last);
      shared_->lied = true;
    } else if (!got->empty()) {
      shared_->last = got->back();
      shared_->last_member = poll->member;
    }
    return out;
  }

 private:
  std::unique_ptr<Target> inner_;
  std::shared_ptr<Shared> shared_;
};

class DoubleHandingTarget final : public Target {
 public:
  [[nodiscard]] std::string name() const override { return "double-handing"; }
  oplang::Outcome step(const oplang::Op& op) override { return inner_.step(op); }
  std::unique_ptr<Target> worker() override {
    return std::make_unique<DoubleHandingWorker>(inner_.worker(), shared_);
  }

 private:
  InProcTarget inner_;
  std::shared_ptr<DoubleHandingWorker::Shared> shared_ =
      std::make_shared<DoubleHandingWorker::Shared>();
};

TEST(ConformanceParallel, AMessageHeldByTwoWorkersIsNotLinearizableAndShrinks) {
  const ParallelOptions options;
  const TargetFactory factory = [] { return std::make_unique<DoubleHandingTarget>(); };
  std::optional<oplang::Program> failing;
  ParallelVerdict verdict;
  for (std::uint64_t seed = 1; seed <= 500 && !failing; ++seed) {
    const oplang::Program program = generate_parallel(seed, options);
    std::unique_ptr<Target> target = factory();
    verdict = check_parallel(*target, program, strict_profile(), options);
    if (!verdict.linearizable) failing = program;
  }
  ASSERT_TRUE(failing.has_value()) << "no generated program exposed a double hand-out";
  EXPECT_NE(verdict.report.find("NOT linearizable"), std::string::npos) << verdict.report;
  bool red = false;
  for (const TimedStep& s : verdict.timeline) red = red || s.anomaly;
  EXPECT_TRUE(red) << "the timeline marks the calls no order could place";

  // The lie needs the second poll to see the first one's record; real threads may run the
  // two without overlap in either order, and on a loaded machine (CI, two cores) a poll
  // may find nothing: a candidate counts if one of 3 runs fails, and the shrunk program
  // gets 20 tries.
  const oplang::Program small =
      shrink_parallel(factory, *failing, strict_profile(), options, 3, 60);
  bool again_caught = false;
  for (int t = 0; t < 20 && !again_caught; ++t) {
    std::unique_ptr<Target> again = factory();
    again_caught = !check_parallel(*again, small, strict_profile(), options).linearizable;
  }
  EXPECT_TRUE(again_caught) << oplang::print(small);
  std::size_t before = 0, after = 0;
  for (const oplang::Fiber& f : failing->fibers) before += f.ops.size();
  for (const oplang::Fiber& f : small.fibers) after += f.ops.size();
  EXPECT_LE(after, before);
  EXPECT_LE(after, 3u) << "two polls (the second one lied) and little else\n"
                       << oplang::print(small);
}

// Two overlapping polls of two on three messages: one got 0 and 2, the other only 1 (what
// JetStream's waiting pull requests do). No order of two atomic polls explains it; as
// one-message polls it linearizes, and only under that switch.
TEST(ConformanceParallel, InterleavedBatchesLinearizeOnlyAsOneMessagePolls) {
  using fiberprop::Call;
  using fiberprop::PullOp;
  fiberprop::ParallelHistory h;
  auto prefix = [&](PullOp::Kind kind, std::string result) {
    PullOp op;
    op.kind = kind;
    if (kind == PullOp::Kind::kSubscribePull) op.arg = 50;  // the ack timeout
    h.prefix.push_back(Call{op, -1, 0, 0, std::move(result)});
  };
  prefix(PullOp::Kind::kCreateTopic, "ok");
  prefix(PullOp::Kind::kSubscribePull, "ok");
  for (const char* offset : {"0", "1", "2"}) prefix(PullOp::Kind::kPublish, offset);
  auto poll = [](int member, std::string result) {
    PullOp op;
    op.kind = PullOp::Kind::kPoll;
    op.member = member;
    op.arg = 2;
    return Call{op, member, 1, 10, std::move(result)};
  };
  h.calls = {poll(0, "[0#1@50 2#1@50]"), poll(1, "[1#1@50]")};
  EXPECT_FALSE(fiberprop::check_linearizable(h).ok);
  const fiberprop::ParallelHistory split = split_polls(h, /*keep=*/-2);
  EXPECT_EQ(split.calls.size(), 4u);  // three one-message polls and the short one's empty
  EXPECT_TRUE(fiberprop::check_linearizable(split).ok)
      << fiberprop::describe(split, fiberprop::check_linearizable(split));
  // Split or not, one message cannot go to both.
  h.calls = {poll(0, "[0#1@50 1#1@50]"), poll(1, "[1#1@50]")};
  EXPECT_FALSE(fiberprop::check_linearizable(split_polls(h, -2)).ok);
}

// An engine whose first accepted ack of a worker is answered but never applied: the
// message comes back to the settle. The queue checkers name it (acked-came-back), and the
// history does not linearize either.
class ForgetfulAckTarget final : public Target {
 public:
  [[nodiscard]] std::string name() const override { return "forgetful-ack"; }
  oplang::Outcome step(const oplang::Op& op) override { return inner_.step(op); }
  std::optional<model::Stats> stats(const std::string& t, const std::string& s) override {
    return inner_.stats(t, s);
  }
  std::unique_ptr<Target> worker() override {
    class Worker final : public Target {
     public:
      Worker(std::unique_ptr<Target> inner, std::shared_ptr<std::atomic<bool>> forgot)
          : inner_(std::move(inner)), forgot_(std::move(forgot)) {}
      [[nodiscard]] std::string name() const override { return "forgetful-ack worker"; }
      oplang::Outcome step(const oplang::Op& op) override {
        if (const auto* ack = std::get_if<oplang::Ack>(&op);
            ack != nullptr && held_.erase(ack->offset) > 0 && !forgot_->exchange(true)) {
          return oplang::Outcome{std::nullopt, oplang::BoolResult{true}, {}};  // not applied
        }
        if (const auto* nack = std::get_if<oplang::Nack>(&op)) held_.erase(nack->offset);
        oplang::Outcome out = inner_->step(op);
        if (const auto* got = std::get_if<std::vector<model::Received>>(&out.value)) {
          for (const model::Received& r : *got) held_.insert(r.offset);
        }
        return out;
      }

     private:
      std::unique_ptr<Target> inner_;
      std::shared_ptr<std::atomic<bool>> forgot_;
      std::set<model::Offset> held_;  // what this worker's polls handed it
    };
    return std::make_unique<Worker>(inner_.worker(), forgot_);
  }

 private:
  InProcTarget inner_;
  std::shared_ptr<std::atomic<bool>> forgot_ = std::make_shared<std::atomic<bool>>(false);
};

TEST(ConformanceParallel, AnAckedMessageThatComesBackIsNamedByTheQueueCheckers) {
  const ParallelOptions options;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const oplang::Program program = generate_parallel(seed, options);
    ForgetfulAckTarget target;
    const ParallelVerdict v = check_parallel(target, program, strict_profile(), options);
    if (!v.failed()) continue;  // no worker acked a message it held
    EXPECT_NE(v.anomalies.find("acked-came-back: "), std::string::npos)
        << oplang::print(program) << v.report;
    EXPECT_FALSE(v.linearizable) << v.report;
    EXPECT_NE(v.report.find("queue anomalies:"), std::string::npos) << v.report;
    return;
  }
  FAIL() << "no generated program had a worker ack a message it held";
}

// The engine's counters are judged against the calls where it keeps them (R13): an
// engine that counts one offer too many still linearizes, and only the queue checkers see it.
TEST(ConformanceParallel, CountersThatDoNotMatchTheHistoryAreAnAnomaly) {
  class Overcounting final : public Target {
   public:
    [[nodiscard]] std::string name() const override { return "overcounting"; }
    oplang::Outcome step(const oplang::Op& op) override { return inner_.step(op); }
    std::unique_ptr<Target> worker() override { return inner_.worker(); }
    std::optional<model::Stats> stats(const std::string& t, const std::string& s) override {
      std::optional<model::Stats> st = inner_.stats(t, s);
      if (st) ++st->delivered;
      return st;
    }

   private:
    InProcTarget inner_;
  };
  const ParallelOptions options;
  Overcounting target;
  const ParallelVerdict v =
      check_parallel(target, generate_parallel(1, options), strict_profile(), options);
  EXPECT_TRUE(v.linearizable) << v.report;
  EXPECT_NE(v.anomalies.find("counters: "), std::string::npos) << v.report;
  EXPECT_TRUE(v.failed());
}

TEST(ConformanceParallel, ATargetWithoutWorkersIsRefusedByName) {
  class Solo final : public Target {
   public:
    [[nodiscard]] std::string name() const override { return "solo"; }
    oplang::Outcome step(const oplang::Op& op) override { return inner_.step(op); }

   private:
    InProcTarget inner_;
  };
  Solo solo;
  try {
    check_parallel(solo, generate_parallel(1, ParallelOptions{}), strict_profile(),
                   ParallelOptions{});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("solo"), std::string::npos) << e.what();
  }
}

TEST(ConformanceParallel, JetStreamWorkersSharingOneDurableLinearize) {
  NatsServer server;
  ParallelOptions options;
  std::size_t judged = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const oplang::Program program = generate_parallel(seed, options);
    JetStreamTarget target(server.url(), "par" + std::to_string(seed), 20);
    const ParallelVerdict v = check_parallel(target, program, jetstream_profile(), options);
    if (v.void_run) continue;
    ++judged;
    EXPECT_TRUE(v.linearizable) << "seed " << seed << "\n" << oplang::print(program) << v.report;
    // JetStream keeps no R13 counters and expires on its own clock: the queue checkers
    // still judge what it handed out, acked and dead-lettered.
    EXPECT_EQ(v.anomalies, "") << "seed " << seed << "\n" << oplang::print(program) << v.report;
  }
  EXPECT_GE(judged, 4u) << "loopback runs are fast enough to judge";
  EXPECT_TRUE(server.alive()) << server.log_tail(20);
}

}  // namespace
}  // namespace conformance
