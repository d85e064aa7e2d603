// The in-process broker's durable mode as a killable server (broker_server): its reply
// lines, its client, its fixture, and the fault workload on it, where SIGKILL of a real
// process must lose no acknowledged publish and never bring back the ack floor.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "conformance/broker_server.h"
#include "conformance/broker_wire.h"
#include "conformance/faults.h"
#include "conformance/lazy_fs.h"
#include "conformance/served_target.h"

namespace conformance {
namespace {

TEST(BrokerWire, EveryReplyComesBackAsItWasWithAnyPayloadBytes) {
  std::vector<oplang::Outcome> outcomes(6);
  outcomes[1].value = oplang::OffsetResult{42};
  outcomes[2].value = oplang::BoolResult{true};
  outcomes[3].value = oplang::CountResult{7};
  model::Received a;
  a.offset = 3;
  a.attempt = 2;
  a.deadline = 1500;
  a.payload = std::string("sp ace\nnew:line\0zero", 20);
  model::Received empty;
  empty.offset = 4;
  empty.attempt = 1;
  outcomes[4].value = std::vector<model::Received>{a, empty};
  outcomes[5].error = model::ErrorCode::kPartitionOutOfRange;
  for (const oplang::Outcome& o : outcomes) {
    const std::string line = encode_reply(o);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_EQ(decode_reply(line), o) << line;
  }
  for (int c = 0; c <= static_cast<int>(model::ErrorCode::kPartitionOutOfRange); ++c) {
    oplang::Outcome o;
    o.error = static_cast<model::ErrorCode>(c);
    EXPECT_EQ(decode_reply(encode_reply(o)), o) << model::to_string(*o.error);
  }
}

TEST(BrokerWire, AFailureOrALineThatIsNoReplyIsAnEngineFailure) {
  EXPECT_THROW(decode_reply(encode_failure("disk on fire\nreally")), TargetFailure);
  for (const std::string bad :
       {"", "offset", "offset x", "bool 2", "received 2 1:1:0:61", "received 1 1:1:61",
        "received 1 1:1:0:6", "error no_such_code", "done extra", "hello"}) {
    EXPECT_THROW(decode_reply(bad), TargetFailure) << bad;
  }
  oplang::Outcome stats;
  stats.value = model::Stats{};
  EXPECT_THROW(encode_reply(stats), std::invalid_argument);
}

TEST(ServedBroker, AnOpOutsideThePullSubsetIsRefusedBeforeAnythingIsSent) {
  ServedTarget target(1);  // nothing listens on port 1: a sent op would fail differently
  EXPECT_THROW(target.step(oplang::Advance{5}), std::invalid_argument);
  EXPECT_THROW(target.step(oplang::GetStats{"t", "s"}), std::invalid_argument);
  EXPECT_THROW(target.step(oplang::Poll{"t", "s", "w", 1}), TargetFailure);
}

TEST(ServedBroker, AMissingBinaryIsOneLineThatSaysHowToBuildIt) {
  ::setenv("BROKER_SERVER_BIN", "/nonexistent/broker_server", 1);
  try {
    BrokerServer server;
    ADD_FAILURE() << "started without a binary";
  } catch (const TargetFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("broker_server not found"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  ::unsetenv("BROKER_SERVER_BIN");
}

std::vector<model::Offset> offsets_polled(ServedTarget& target, std::size_t max) {
  const oplang::Outcome o = target.step(oplang::Poll{"t", "s", "w", max});
  std::vector<model::Offset> out;
  for (const model::Received& m : std::get<std::vector<model::Received>>(o.value)) {
    out.push_back(m.offset);
  }
  return out;
}

// Topic "t" and its pull subscription "s" from the beginning, no dead letters.
void make_topic_and_subscription(ServedTarget& target) {
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  oplang::SubscribePull sp;
  sp.topic = "t";
  sp.name = "s";
  sp.max_deliveries = 0;
  sp.start = model::Start{model::Start::Kind::kBeginning, 0};
  ASSERT_FALSE(target.step(sp).error);
}

// R20 across real processes: a clean stop and a SIGKILL each keep the topic, the
// subscription and its saved position; what was held comes back, what was acked does not.
TEST(ServedBroker, AStopAndAKillKeepTheSavedPositionAndBringBackWhatWasHeld) {
  BrokerServer server;
  ServedTarget target(server.port());
  ASSERT_NO_FATAL_FAILURE(make_topic_and_subscription(target));
  for (const char* v : {"a", "b", "c", "d"}) {
    ASSERT_FALSE(target.step(oplang::Publish{"t", v, {}, ""}).error);
  }
  EXPECT_EQ(offsets_polled(target, 3), (std::vector<model::Offset>{0, 1, 2}));
  oplang::Ack ack{"t", "s", 0, "w"};
  EXPECT_EQ(oplang::accepted(target.step(ack).value), std::optional<bool>{true});
  ack.offset = 2;
  EXPECT_EQ(oplang::accepted(target.step(ack).value), std::optional<bool>{true});

  server.restart();
  EXPECT_THROW(target.step(oplang::Poll{"t", "s", "w", 1}), TargetFailure)
      << "the old connection died with the server";
  // Saved position 1: offset 1 was held, 2 acked above it (R20 may offer it again).
  EXPECT_EQ(offsets_polled(target, 10), (std::vector<model::Offset>{1, 2, 3}));
  ack.offset = 1;
  EXPECT_EQ(oplang::accepted(target.step(ack).value), std::optional<bool>{true});

  server.kill9();
  server.restart();
  EXPECT_THROW(offsets_polled(target, 1), TargetFailure) << "the connection died with it";
  EXPECT_EQ(offsets_polled(target, 10), (std::vector<model::Offset>{2, 3}));
  EXPECT_EQ(target.step(oplang::CreateTopic{"t"}).error, model::ErrorCode::kDuplicateTopic);
}

// SPEC R21 across real processes: a flipped bit in a record with good records after it makes
// the server refuse its directory (CorruptLog, a failed start), and repair_restart starts it
// with --repair, which cuts from the damaged record on and says so; what came before serves.
TEST(ServedBroker, ADamagedRecordIsRefusedUntilARepairThatSaysWhatItCut) {
  BrokerServer server;
  ServedTarget target(server.port());
  ASSERT_NO_FATAL_FAILURE(make_topic_and_subscription(target));
  for (const char* v : {"first-a", "second-\xc3\xa9", "third-c", "fourth-d"}) {
    ASSERT_FALSE(target.step(oplang::Publish{"t", v, {}, ""}).error);
  }
  server.kill9();
  std::string segment;
  for (const auto& e : std::filesystem::recursive_directory_iterator(server.dir() + "/store")) {
    if (e.path().extension() == ".seg") segment = e.path().string();
  }
  ASSERT_FALSE(segment.empty());
  std::string bytes;
  {
    std::ifstream in(segment, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t at = bytes.find("second-");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x10);
  std::ofstream(segment, std::ios::binary | std::ios::trunc) << bytes;

  EXPECT_THROW(server.restart(), TargetFailure) << "a damaged record served without a word";
  const std::string said = server.repair_restart();
  EXPECT_NE(said.find("corrupt record"), std::string::npos) << said;
  EXPECT_NE(said.find(segment), std::string::npos) << said;
  EXPECT_THROW(offsets_polled(target, 1), TargetFailure) << "the connection died with it";
  EXPECT_EQ(offsets_polled(target, 10), (std::vector<model::Offset>{0}));
}

// A pause holds the server for its whole span: the fault ends no sooner than its drawn time.
TEST(InProcFaults, APauseLastsItsWholeSpan) {
  BrokerServer server;
  ServedTarget target(server.port());
  FaultOptions o;
  o.seed = 5;
  o.seconds = 6;
  o.kinds = "pause";
  FaultControl control;
  control.pause = [&] { server.pause(); };
  control.resume = [&] { server.resume(); };
  const FaultReport r = run_faults(target, control, o, [] { return false; });
  ASSERT_FALSE(r.faults.empty());
  ASSERT_EQ(r.took_ms.size(), r.faults.size());
  for (std::size_t i = 0; i < r.faults.size(); ++i) {
    EXPECT_EQ(r.faults[i].kind, Fault::Kind::kPause);
    EXPECT_GE(r.took_ms[i], r.faults[i].down_ms) << "pause " << i << " (seed 5)";
  }
}

// The fault workload on the durable broker: SIGKILL, clean restarts and pauses of a real
// process, fsync always. Acks above the first unacked message may come back (SPEC R20);
// nothing else (a message left to time out comes back: the server expires deadlines), and
// no unsettled message comes back at a delivery count it had before (R34, durable attempts).
TEST(InProcFaults, AKilledBrokerLosesNothingAndNeverBringsBackItsAckFloor) {
  BrokerServer server;
  ServedTarget target(server.port());
  FaultOptions o;
  o.seed = 7;
  o.seconds = 8;
  o.kinds = "kill9,restart,pause";
  FaultControl control;
  control.kill9 = [&] { server.kill9(); };
  control.stop = [&] { server.stop(); };
  control.restart = [&] { server.restart(); };
  control.pause = [&] { server.pause(); };
  control.resume = [&] { server.resume(); };
  const FaultReport r = run_faults(target, control, o, [] { return false; });
  EXPECT_GT(r.ok, 100u);
  EXPECT_GT(r.delivered, 100u);
  EXPECT_GT(r.call_errors, 0u) << "no call met a fault";
  EXPECT_GT(r.counted_after_restart, 0u) << "no delivery count was judged across a restart";
  for (const auto& [name, values] : r.anomalies) {
    if (name == "acked-came-back") continue;
    EXPECT_TRUE(values.empty()) << name << ": " << values.front() << " (seed 7)";
  }
  EXPECT_TRUE(server.alive());
}

// R33 under the fault workload, on a real failing disk (lazy_fs): every write and fsync
// failing with EIO, then ENOSPC, then only the fsyncs, each span healed and the broker
// killed and started again. Nothing acknowledged is lost and nothing else comes back but
// acks above the first unacked message (R20). A publish that met IoError is undecided (a
// record whose write was taken and whose sync failed may be found by the reopen): the
// history counts it indeterminate, never failed (planted: io_error_publish_judged_failed).
TEST(InProcFaults, AFailingDiskLosesNothingAndWhatMetIoErrorIsUndecided) {
  if (const std::string why = lazy_fs_unavailable(); !why.empty()) GTEST_SKIP() << why;
  LazyFs disk;
  BrokerServerOptions bo;
  bo.store_dir = disk.path();
  BrokerServer server(bo);
  ServedTarget target(server.port());
  FaultOptions o;
  o.seed = 3;
  o.seconds = 7;
  o.schedule = parse_schedule("1000:disk-error:400:0,2800:disk-error:400:1,4600:disk-error:400:2",
                              o.seconds);
  FaultControl control;
  control.kill9 = [&] { server.kill9(); };
  control.restart = [&] { server.restart(); };
  control.fail_disk = [&](std::uint64_t where) {
    if (where % 3 == 2) {
      disk.fail_syncs();
    } else {
      disk.fail(where % 3 == 0 ? EIO : ENOSPC);
    }
    return std::to_string(where % 3);
  };
  control.heal_disk = [&] { disk.heal(); };
  const FaultReport r = run_faults(target, control, o, [] { return false; });
  EXPECT_GT(r.ok, 100u);
  EXPECT_EQ(r.failed, 0u) << "a publish that met IoError was judged failed";
  EXPECT_GT(r.indeterminate, 0u) << "no publish met the failing disk";
  EXPECT_GT(disk.counters().failed, 0u);
  for (const auto& [name, values] : r.anomalies) {
    if (name == "acked-came-back") continue;
    EXPECT_TRUE(values.empty()) << name << ": " << values.front();
  }
  EXPECT_TRUE(server.alive());
}

}  // namespace
}  // namespace conformance
