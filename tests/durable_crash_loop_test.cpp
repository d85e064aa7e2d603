// SPEC R34 on the real file system: a handler that kills its process on one message. Each
// round a child process opens the same directory, resumes the push subscription and
// drains; on the poison message its handler calls abort(). With durable_attempts every
// offer's attempt is synced before the handler runs, so after max_deliveries deaths the
// next restart dead-letters the message ("max deliveries") and the rest is delivered.
// Without the option no attempt is ever saved (nothing returns a result), and the loop
// goes on: that test shows the option is what ends it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cstdlib>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

constexpr int kMaxDeliveries = 3;
constexpr int kDone = 0;    // the child's drain returned: nothing left to offer
constexpr int kFailed = 3;  // the child met an error it did not expect

StorageOptions storage(const testing::TempDir& dir) {
  StorageOptions o;
  o.directory = dir.str() + "/store";
  return o;  // publish_sync and commit_sync: always
}

PushOptions poison_options(bool durable_attempts) {
  PushOptions o;
  o.max_deliveries = kMaxDeliveries;
  o.start = StartPosition::beginning();
  o.durable_attempts = durable_attempts;
  return o;
}

/// One round in a child: open, (the first time) publish three messages, subscribe or
/// resume, drain. Ends with _exit(kDone), or dies of SIGABRT in the handler.
[[noreturn]] void child(const testing::TempDir& dir, bool durable_attempts) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // abort() is the point, a core file is not
  try {
    Broker b(BrokerOptions::synchronous().with_storage(storage(dir)));
    if (b.topics().empty()) {
      b.create_topic("t");
      b.publish("t", "ok-0");
      b.publish("t", "poison");
      b.publish("t", "ok-1");
    }
    b.subscribe(
        "t", "s",
        [](const Delivery& d) {
          if (d.message->payload() == "poison") std::abort();
          return true;
        },
        poison_options(durable_attempts));
    b.drain();
  } catch (...) {
    ::_exit(kFailed);
  }
  ::_exit(kDone);
}

/// Runs rounds until a child's drain returns or `rounds` ran; the number of deaths by abort.
int crash_loop(const testing::TempDir& dir, bool durable_attempts, int rounds) {
  int deaths = 0;
  for (int round = 0; round < rounds; ++round) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      ADD_FAILURE() << "fork failed";
      return deaths;
    }
    if (pid == 0) child(dir, durable_attempts);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kDone) return deaths;
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
      ADD_FAILURE() << "round " << round << ": the child ended with status " << status;
      return deaths;
    }
    ++deaths;
  }
  return deaths;
}

TEST(DurableKill9, ACrashLoopingHandlerIsDeadLetteredAfterMaxDeliveriesDeaths) {
  testing::TempDir dir("broker-crash-loop");
  EXPECT_EQ(crash_loop(dir, true, kMaxDeliveries + 3), kMaxDeliveries)
      << "the process must die exactly max_deliveries times";
  Broker b(BrokerOptions::synchronous().with_storage(storage(dir)));
  const std::vector<DeadLetter> dead = b.dead_letters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].message->payload(), "poison");
  EXPECT_EQ(dead[0].reason, "max deliveries");
  EXPECT_EQ(dead[0].attempts, kMaxDeliveries);
  EXPECT_EQ(b.stats("t", "s").committed, 3u) << "ok-0 and ok-1 confirmed, poison dead";
}

TEST(DurableKill9, WithoutDurableAttemptsACrashLoopGoesOn) {
  testing::TempDir dir("broker-crash-loop");
  const int rounds = kMaxDeliveries + 3;
  EXPECT_EQ(crash_loop(dir, false, rounds), rounds)
      << "without the option no attempt is saved before the handler kills the process";
  Broker b(BrokerOptions::synchronous().with_storage(storage(dir)));
  EXPECT_TRUE(b.dead_letters("t", "s").empty());
}

}  // namespace
}  // namespace broker
