// The target protocol (conformance/target_protocol.h) and `conformance --target exec`: its
// lines carry every generated op and every outcome of this broker unchanged, whatever the
// bytes; this broker behind it holds every rule; a target that lies is caught, shrunk and
// replayed from one line; a target that breaks the protocol is the engine's failure, naming
// the line, never a violation.
#include "conformance/exec_target.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "conformance/generator.h"
#include "conformance/inproc_target.h"
#include "conformance/parallel.h"
#include "conformance/profile.h"
#include "conformance/runner.h"
#include "conformance/target_protocol.h"
#include "oplang/text.h"

namespace conformance {
namespace {

// A hello that lists every feature of protocol 1.
Hello full_hello() {
  Hello h;
  h.name = "any";
  h.serves = protocol_features();
  h.workers = true;
  return h;
}

// Generated scripts that use every feature the protocol carries.
GenOptions every_feature() {
  GenOptions g;
  g.margin = 0;
  g.retention_messages = {2, 3, 5};
  g.max_in_flight = {1, 2, 3};
  g.seek = g.seek_to_time = g.nack_delays = g.lag = true;
  return g;
}

rc::Gen<std::string> gen_bytes() {
  return rc::gen::map(
      rc::gen::container<std::vector<unsigned char>>(rc::gen::arbitrary<unsigned char>()),
      [](const std::vector<unsigned char>& v) { return std::string(v.begin(), v.end()); });
}

TEST(TargetProtocol, EveryGeneratedOpTheHelloServesRoundTrips) {
  const Hello hello = full_hello();
  std::size_t carried = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    for (const oplang::Op& op : generate(seed, every_feature(), strict_profile())) {
      if (!hello_serves(hello, op)) continue;
      const Request back = decode_request(encode_request(Request{seed, 3, op}));
      ASSERT_EQ(back.id, seed);
      ASSERT_EQ(back.worker, 3u);
      ASSERT_TRUE(back.op == op) << "seed " << seed << ": " << oplang::print(op) << " came back as "
                                 << oplang::print(back.op) << " from "
                                 << encode_request({seed, 3, op});
      ++carried;
    }
  }
  EXPECT_GT(carried, 3000u);
}

TEST(TargetProtocol, EveryOutcomeOfTheBrokerRoundTripsAndIsAnAnswerItsOpMayGive) {
  const Hello hello = full_hello();
  std::size_t carried = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    InProcTarget target;
    for (const oplang::Op& op : generate(seed, every_feature(), strict_profile())) {
      if (!hello_serves(hello, op)) continue;
      Reply reply;
      reply.id = seed;
      reply.outcome = target.step(op);
      const Reply back = decode_protocol_reply(encode_protocol_reply(reply));
      ASSERT_TRUE(back.outcome.has_value()) << encode_protocol_reply(reply);
      ASSERT_TRUE(*back.outcome == *reply.outcome)
          << "seed " << seed << ": " << oplang::print(op) << "\n"
          << oplang::print(*reply.outcome) << " came back as " << oplang::print(*back.outcome);
      if (!reply.outcome->error) {
        ASSERT_TRUE(answers(op, reply.outcome->value))
            << oplang::print(op) << " answered " << oplang::print(*reply.outcome);
      }
      ++carried;
    }
  }
  EXPECT_GT(carried, 1500u);
}

RC_GTEST_PROP(TargetProtocol, AnyBytesTravelUnchanged, ()) {
  oplang::Publish p;
  p.topic = *gen_bytes();
  p.payload = *gen_bytes();
  p.headers = *rc::gen::container<model::Headers>(gen_bytes(), gen_bytes());
  const Request back = decode_request(encode_request(Request{1, 0, p}));
  RC_ASSERT(back.op == oplang::Op{p});

  model::DeadLetter d;
  d.topic = *gen_bytes();
  d.subscription = *gen_bytes();
  d.payload = *gen_bytes();
  d.reason = *gen_bytes();
  d.attempts = *rc::gen::inRange(1, 9);
  d.headers = p.headers;
  model::Received m{*rc::gen::arbitrary<std::uint32_t>(), *gen_bytes(), 1, 20};
  for (const oplang::Value& v : {oplang::Value{std::vector<model::DeadLetter>{d}},
                                 oplang::Value{std::vector<model::Received>{m}}}) {
    Reply reply;
    reply.id = 9;
    reply.outcome = oplang::Outcome{std::nullopt, v, {}};
    const Reply r = decode_protocol_reply(encode_protocol_reply(reply));
    RC_ASSERT(r.outcome.has_value());
    RC_ASSERT(r.outcome->value == v);
  }
  Reply failed;
  failed.failure = *gen_bytes();
  RC_ASSERT(decode_protocol_reply(encode_protocol_reply(failed)).failure == failed.failure);
}

RC_GTEST_PROP(LineSplitter, AnySplitOfLinesGivesEveryLineBackInOrder, ()) {
  const auto lines =
      *rc::gen::container<std::vector<std::string>>(rc::gen::map(gen_bytes(), [](std::string s) {
        std::erase(s, '\n');
        return s;
      }));
  std::string stream;
  for (const std::string& l : lines) stream += l + "\n";
  // Cut the stream anywhere: a read may end mid-line or hold several lines.
  auto cuts = *rc::gen::container<std::vector<std::size_t>>(
      rc::gen::inRange<std::size_t>(0, stream.size() + 1));
  std::sort(cuts.begin(), cuts.end());
  LineSplitter splitter;
  std::vector<std::string> got;
  std::size_t from = 0;
  for (std::size_t cut : cuts) {
    for (std::string& l : splitter.feed(stream.substr(from, cut - from)))
      got.push_back(std::move(l));
    from = cut;
  }
  for (std::string& l : splitter.feed(stream.substr(from))) got.push_back(std::move(l));
  RC_ASSERT(got == lines);
  RC_ASSERT(splitter.pending().empty());
}

TEST(TargetProtocol, ALineThatIsNotTheProtocolsIsATypedErrorNamingWhy) {
  for (const auto& [line, why] : std::vector<std::pair<std::string, std::string>>{
           {"not json", "not JSON"},
           {"[1]", "not a JSON object"},
           {R"({"id":1,"offset":-3})", "'offset'"},
           {R"({"id":1,"ack":"maybe"})", "unknown ack outcome 'maybe'"},
           {R"({"id":1,"error":"oops"})", "unknown error name 'oops'"},
           {R"({"id":1})", "a reply has one of"},
           {R"({"id":1,"received":[{"offset":0,"payload":"\u0100","attempt":1,"deadline":0}]})",
            "above U+00FF"},
       }) {
    try {
      (void)decode_protocol_reply(line);
      ADD_FAILURE() << line << " was taken";
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << line << ": " << e.what();
    }
  }
  EXPECT_THROW((void)decode_hello(R"({"hello":"at-least-once-target","version":1,"name":"x",)"
                                  R"("serves":["push"]})"),
               ProtocolError);
  EXPECT_THROW((void)decode_request(R"({"id":1,"worker":0,"op":"drain"})"), ProtocolError);
  EXPECT_THROW((void)encode_request(Request{1, 0, oplang::Drain{}}), std::invalid_argument);
}

// The reference protocol target: this broker behind stdin and stdout.
std::unique_ptr<Target> reference() {
  return std::make_unique<ExecTarget>(std::vector<std::string>{INPROC_PROTOCOL_TARGET},
                                      std::chrono::milliseconds(10000));
}

TEST(ExecTarget, TheBrokerBehindTheProtocolHoldsEveryRule) {
  GenOptions gen = every_feature();
  const Profile p = profile_named("inproc");
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const oplang::Script script = generate(seed, gen, p);
    std::unique_ptr<Target> t = reference();
    EXPECT_EQ(t->name(), "inproc");
    const Verdict v = check(*t, script, p, 0);
    ASSERT_FALSE(v.violation) << "seed " << seed << "\n"
                              << replay_text("exec-inproc", p, seed, script);
  }
  ParallelOptions popts;
  popts.margin = 0;
  for (std::uint64_t seed = 1; seed <= 15; ++seed) {
    std::unique_ptr<Target> t = reference();
    const ParallelVerdict v = check_parallel(*t, generate_parallel(seed, popts), p, popts);
    ASSERT_FALSE(v.failed()) << "parallel seed " << seed << "\n" << v.report;
    EXPECT_GT(v.calls, 0u);
  }
}

struct ToolRun {
  int status = -1;
  std::string output;
};

// The tool with `args`, its stdout and stderr together.
ToolRun tool(const std::string& args) {
  static int n = 0;
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() /
      ("exec-target-test-" + std::to_string(::getpid()) + "-" + std::to_string(++n) + ".txt");
  const std::string command =
      std::string(CONFORMANCE_TOOL) + " " + args + " >" + out.string() + " 2>&1";
  const int raw = std::system(command.c_str());
  std::ifstream in(out);
  ToolRun r;
  r.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove(out);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.output = command + "\n" + r.output;
  return r;
}

TEST(ExecTarget, ALyingTargetIsCaughtShrunkAndReplayedFromOneLine) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("exec-liar-" + std::to_string(::getpid()));
  for (const std::string lie : {"ack2", "forget-acks"}) {
    std::filesystem::remove_all(dir);
    const std::string program = std::string(LYING_PROTOCOL_TARGET) + " --lie " + lie;
    const ToolRun run = tool("--target exec --seconds 60 --first --parallel 0 --out " +
                             dir.string() + " -- " + program);
    ASSERT_EQ(run.status, 1) << run.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(run.output, m, std::regex("shrunk to ([0-9]+) steps")))
        << run.output;
    EXPECT_LE(std::stoi(m[1]), 12) << run.output;
    ASSERT_TRUE(std::regex_search(
        run.output, m, std::regex("replay: scripts/conformance exec --replay (\\S+) -- (.*)\n")))
        << run.output;
    EXPECT_EQ(m[2].str(), program);
    const ToolRun again = tool("--target exec --replay " + m[1].str() + " -- " + program);
    EXPECT_EQ(again.status, 1) << again.output;
    EXPECT_NE(again.output.find("violated: R"), std::string::npos) << again.output;
    EXPECT_EQ(tool("--target exec --replay " + m[1].str() + " -- " + INPROC_PROTOCOL_TARGET).status,
              0);
  }
  std::filesystem::remove_all(dir);
}

TEST(ExecTarget, ABrokenLineIsTheEnginesFailureNamingItNeverAViolation) {
  const std::string liar = std::string(LYING_PROTOCOL_TARGET) + " --lie ";
  for (const auto& [lie, says] : std::vector<std::pair<std::string, std::string>>{
           {"garbage:7", "reply line 8 is not the protocol's (not JSON"},
           {"silent:7", "no reply within 1500 ms to request {"},
           {"wrong-kind:2", "with a value of another kind"},
           {"exit:7", "closed its stdout"},
           {"version", "protocol version 2: this kit speaks 1"},
       }) {
    const ToolRun run = tool("--target exec --seconds 5 --reply-ms 1500 -- " + liar + lie);
    EXPECT_EQ(run.status, 3) << lie << "\n" << run.output;
    EXPECT_NE(run.output.find(says), std::string::npos) << lie << "\n" << run.output;
    EXPECT_EQ(run.output.find("Violation"), std::string::npos) << lie << "\n" << run.output;
    if (lie == "garbage:7") {
      EXPECT_NE(run.output.find("<html>502 Bad Gateway</html>"), std::string::npos) << run.output;
    }
  }
  EXPECT_EQ(tool("--target exec --seconds 1").status, 2);
  EXPECT_EQ(tool("--target exec --seconds 1 -- /nonexistent/target").status, 3);
}

TEST(ExecTarget, TheToolJudgesTheReferenceTargetAsItJudgesThisBroker) {
  const std::filesystem::path report = std::filesystem::temp_directory_path() /
                                       ("exec-report-" + std::to_string(::getpid()) + ".md");
  const ToolRun run = tool("--target exec --seconds 4 --report " + report.string() + " -- " +
                           INPROC_PROTOCOL_TARGET);
  ASSERT_EQ(run.status, 0) << run.output;
  std::ifstream in(report);
  const std::string table((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(report);
  EXPECT_NE(table.find("Conformance of 'exec-inproc' under profile 'strict'"), std::string::npos)
      << table;
  for (const char* rule : {"| R2 |", "| R11 |", "| R12 |", "| R22 |", "| R24 |", "| R27 |",
                           "| R28 |", "| L |", "| H |"}) {
    const std::size_t at = table.find(rule);
    ASSERT_NE(at, std::string::npos) << rule << "\n" << table;
    const std::string row = table.substr(at, table.find('\n', at) - at);
    EXPECT_NE(row.find("| holds |"), std::string::npos) << row;
  }
  EXPECT_NE(
      table.find("| R8 | synchronous drain (push) | - | not served: not in the target protocol"),
      std::string::npos)
      << table;
}

}  // namespace
}  // namespace conformance
