// RabbitMQ on a rabbitmq-server of the test's own: the fixture stays on loopback and leaves
// nothing behind; each rabbitmq profile switch shown by a raw probe through pika alone
// (conformance/adapters/rabbitmq/probes.py); and the kit's table on it through the adapter.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "conformance/local_process.h"
#include "conformance/rabbitmq_server.h"
#include "conformance/target.h"

namespace conformance {
namespace {

struct Ran {
  int status = -1;
  std::string output;
};

Ran run(const std::string& command) {
  Ran r;
  FILE* out = ::popen((command + " 2>&1").c_str(), "r");
  if (out == nullptr) return r;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, out) != nullptr) r.output += buffer;
  const int raw = ::pclose(out);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

std::string python() {
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

class RabbitMq : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (run(python() + " -c 'import pika'").status != 0) {
      why_not_ = "python3-pika is missing (apt-get install -y python3-pika)";
      return;
    }
    if (find_server_binary("RABBITMQ_SERVER_BIN", "rabbitmq-server", {"/usr/lib/rabbitmq/bin"})
            .empty()) {
      why_not_ = "rabbitmq-server is missing (apt-get install -y rabbitmq-server)";
      return;
    }
    try {
      server_ = std::make_unique<RabbitMqServer>();
    } catch (const TargetFailure& e) {
      failed_ = e.what();  // installed, but it did not start: a failure, not a skip
    }
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    if (!why_not_.empty()) GTEST_SKIP() << why_not_;
    ASSERT_TRUE(server_) << failed_;
  }
  static Ran probe(const std::string& name) {
    return run(python() + " " + RABBITMQ_PROBES + " --url '" + server_->url() + "' " + name);
  }

  static inline std::unique_ptr<RabbitMqServer> server_;
  static inline std::string why_not_;
  static inline std::string failed_;
};

TEST_F(RabbitMq, TheNodeListensOnlyOnLoopbackAndItsDirectoryGoesWithIt) {
  // Every listening socket of the node and its port mapper: AMQP, distribution, epmd.
  const Ran ss = run("ss -ltnpH");
  ASSERT_EQ(ss.status, 0) << ss.output;
  std::istringstream lines(ss.output);
  int seen = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("beam.smp") == std::string::npos && line.find("\"epmd\"") == std::string::npos) {
      continue;
    }
    ++seen;
    std::istringstream fields(line);
    std::string state, recv, send, local;
    fields >> state >> recv >> send >> local;
    EXPECT_TRUE(local.starts_with("127.0.0.1:") || local.starts_with("[::1]:")) << line;
  }
  EXPECT_GE(seen, 3) << ss.output;
  EXPECT_NE(ss.output.find("127.0.0.1:" + std::to_string(server_->port())), std::string::npos);
  // A second node of its own comes and goes: its directory and port with it.
  std::string dir;
  int port = 0;
  {
    RabbitMqServer other;
    dir = other.dir();
    port = other.port();
    EXPECT_NE(other.node(), server_->node());
    EXPECT_TRUE(std::filesystem::exists(dir + "/.erlang.cookie"));
    EXPECT_TRUE(accepts_connection(port));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_FALSE(accepts_connection(port));
}

// One test per switch of the rabbitmq profile (conformance/profile.cpp).
TEST_F(RabbitMq, RawProbeStartsAtTheEnd) {
  const Ran r = probe("starts_at_the_end");
  EXPECT_EQ(r.status, 0) << r.output;
}
TEST_F(RabbitMq, RawProbeReturnedToTheBackUnlessThereIsADeliveryLimit) {
  const Ran r = probe("returned_to_the_back");
  EXPECT_EQ(r.status, 0) << r.output;
}
TEST_F(RabbitMq, RawProbeRedeliveryInReturnOrder) {
  const Ran r = probe("redelivery_in_return_order");
  EXPECT_EQ(r.status, 0) << r.output;
}
TEST_F(RabbitMq, RawProbeNoServerDeadline) {
  const Ran r = probe("no_server_deadline");
  EXPECT_EQ(r.status, 0) << r.output;
}
TEST_F(RabbitMq, RawProbeDeadLetterReasonUnknown) {
  const Ran r = probe("dead_letter_reason_unknown");
  EXPECT_EQ(r.status, 0) << r.output;
}
TEST_F(RabbitMq, RawProbeAnswersNameNoReason) {
  const Ran r = probe("answers_name_no_reason");
  EXPECT_EQ(r.status, 0) << r.output;
}
// Not a switch: what the adapter leaves to the engine.
TEST_F(RabbitMq, RawProbeTheHeaderFilterIsTheBindings) {
  const Ran r = probe("header_filter_is_the_bindings");
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(RabbitMq, TheKitJudgesItUnderItsProfileThroughThePythonAdapter) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rabbitmq-kit-" + std::to_string(::getpid()));
  const std::string report = (dir / "report.md").string();
  std::filesystem::create_directories(dir);
  const Ran r = run(std::string(CONFORMANCE_TOOL) + " --target rabbitmq --url '" + server_->url() +
                    "' --seconds 15 --out " + dir.string() + " --report " + report);
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(report);
  const std::string table((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(table.find("Conformance of 'rabbitmq' under profile 'rabbitmq'"), std::string::npos)
      << table;
  for (const char* row : {"| R2 |", "| R14 |", "| R23 |", "| L |", "| H |"}) {
    const std::size_t at = table.find(row);
    ASSERT_NE(at, std::string::npos) << row << "\n" << table;
    const std::string line = table.substr(at, table.find('\n', at) - at);
    EXPECT_NE(line.find("| holds |"), std::string::npos) << line;
  }
  EXPECT_EQ(r.output.find("rabbitmq-server started"), std::string::npos) << r.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace conformance
