// Fault runs on a real redis-server the test starts (AOF always): the workload completes
// and is judged, the tool's table names every anomaly, and an adapter that replays its last
// publish after a lost connection is caught as `duplicated`.
#include "conformance/faults.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "conformance/redis_server.h"
#include "conformance/redis_target.h"

namespace conformance {
namespace {

RedisServerOptions always() {
  RedisServerOptions o;
  o.appendonly = RedisServerOptions::Fsync::kAlways;
  return o;
}

FaultControl control_of(RedisServer& server) {
  FaultControl control;
  control.kill9 = [&server] { server.kill9(); };
  control.stop = [&server] { server.stop(); };
  control.restart = [&server] { server.restart(); };
  return control;
}

TEST(RedisFaults, AShortRunWithAofAlwaysCompletesAndIsJudged) {
  RedisServer server(always());
  RedisTarget target(server.url(), "faults", 1);
  FaultOptions o;
  o.seed = 3;
  o.seconds = 6;
  const FaultReport r = run_faults(target, control_of(server), o, [] { return false; });
  EXPECT_FALSE(r.faults.empty());
  EXPECT_GT(r.ok, 0u);
  EXPECT_GT(r.delivered, 0u);
  EXPECT_GT(r.call_errors, 0u) << "no call met a fault";
  EXPECT_EQ(r.anomalies.size(), anomaly_names().size());
  EXPECT_TRUE(server.alive());
}

// A planted adapter bug, as a wrapper: after a lost connection its next call first sends
// the last publish that succeeded again (a client replaying its last command on reconnect).
class ReplayingTarget final : public Target {
 public:
  explicit ReplayingTarget(Target& inner) : inner_(inner) {}
  [[nodiscard]] std::string name() const override { return "replaying"; }
  oplang::Outcome step(const oplang::Op& op) override {
    if (lost_ && last_) {
      inner_.step(*last_);  // throws if the server is still away: lost_ stays set
      lost_ = false;
    }
    try {
      oplang::Outcome o = inner_.step(op);
      if (std::holds_alternative<oplang::Publish>(op) && !o.error) last_ = op;
      return o;
    } catch (const TargetFailure&) {
      lost_ = true;
      throw;
    }
  }

 private:
  Target& inner_;
  std::optional<oplang::Op> last_;
  bool lost_ = false;
};

TEST(RedisFaults, AnAdapterReplayingItsLastPublishIsCaughtAsDuplicated) {
  RedisServer server(always());
  RedisTarget redis(server.url(), "replay", 1);
  ReplayingTarget target(redis);
  FaultOptions o;
  o.seed = 5;
  o.seconds = 5;
  o.kinds = "kill9";
  const FaultReport r = run_faults(target, control_of(server), o, [] { return false; });
  ASSERT_GT(r.call_errors, 0u) << "no call met a fault";
  EXPECT_FALSE(r.anomalies.at("duplicated").empty());
}

// The tool's table: one row per anomaly, with the command that reproduces the run.
TEST(RedisFaults, TheToolEndsWithEveryAnomalyRowAndTheCommand) {
  const std::string dir = "/tmp/aloc-faults-test-" + std::to_string(::getpid());
  const std::string cmd = std::string(CONFORMANCE_TOOL) +
                          " --target redis --faults --seconds 5 --seed 2 --appendfsync always "
                          "--out " +
                          dir + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  for (const std::string& name : anomaly_names()) {
    EXPECT_NE(out.find("| redis | AOF appendfsync always | " + name + " | "), std::string::npos)
        << name << "\n"
        << out;
  }
  EXPECT_NE(out.find("scripts/conformance redis --faults --seconds 5 --seed 2"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace conformance
