// SPEC R18, R19 and R21 for segments written through a memory mapping, on the simulated
// disk (SimFileSystem::map keeps each store apart until a sync, and a power cut keeps each
// dirtied page as it was after any number of its stores): over generated logs (payloads
// heavy with zero bytes, of every length around a page, segments of every size), a power
// cut under `none` leaves a prefix of the log and never reads as damage; under `always`
// it loses nothing; damage at rest to a record is never lost silently.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/errors.h"
#include "simfs/sim_file_system.h"

namespace broker {
namespace {

using sim::SimFileSystem;

std::unique_ptr<Broker> open(const std::shared_ptr<SimFileSystem>& disk, FsyncPolicy policy,
                             std::uint64_t segment_bytes) {
  StorageOptions o;
  o.directory = "/store";
  o.file_system = disk;
  o.publish_sync = policy;
  o.commit_sync = policy;
  o.segment_bytes = segment_bytes;
  return std::make_unique<Broker>(BrokerOptions::synchronous().with_storage(o));
}

/// Every payload of topic t from offset 0 on, in offset order (a new pull subscription
/// from the beginning, polled and acked until nothing comes; a log that never ends throws).
std::vector<std::string> log_of(Broker& b, const std::string& reader) {
  PullOptions o;
  o.start = StartPosition::beginning();
  b.subscribe_pull("t", reader, o);
  std::vector<std::string> out;
  for (int round = 0; round < 1000; ++round) {
    const std::vector<Received> got = b.poll("t", reader, "r", 1000);
    if (got.empty()) return out;
    for (const Received& r : got) {
      if (r.message->offset() != out.size()) {
        throw std::logic_error("offset " + std::to_string(r.message->offset()) + " read as " +
                               std::to_string(out.size()));
      }
      out.emplace_back(r.message->payload());
      b.ack(r.receipt);
    }
  }
  throw std::logic_error("the log did not end after 1,000 polls");
}

/// Payloads of 0 to 9,000 bytes (so records end on, before and after page ends, and span
/// pages), half of their bytes zero, some all zero.
rc::Gen<std::string> gen_payload() {
  return rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 9000), [](std::size_t n) {
    return rc::gen::oneOf(rc::gen::just(std::string(n, '\0')),
                          rc::gen::container<std::string>(
                              n, rc::gen::oneOf(rc::gen::just('\0'), rc::gen::arbitrary<char>())));
  });
}

/// A log published in one run, a power cut (or not), and the reopen.
struct Run {
  std::vector<std::string> published;
  std::uint64_t segment_bytes = 0;
  std::uint64_t seed = 0;
};

Run gen_run() {
  Run r;
  r.published = *rc::gen::container<std::vector<std::string>>(gen_payload());
  r.segment_bytes = *rc::gen::inRange<std::uint64_t>(256, 40000);
  r.seed = *rc::gen::arbitrary<std::uint64_t>();
  return r;
}

/// The run's log published on a fresh simulated disk under policy, then a power cut (the
/// process dies with it: no clean close) drawn from the run's seed.
std::shared_ptr<SimFileSystem> publish_then_cut_the_power(const Run& run, FsyncPolicy policy) {
  const auto disk = std::make_shared<SimFileSystem>();
  {
    auto b = open(disk, policy, run.segment_bytes);
    b->create_topic("t");
    for (const std::string& p : run.published) b->publish("t", p);
    disk->die();
  }
  SimFileSystem::CrashOptions cut;
  cut.seed = run.seed;
  disk->crash(cut);
  return disk;
}

// R19 `none`, R21: whatever pages the power cut kept, the reopen succeeds (no CorruptLog:
// a lost page is a torn tail, zeros are space) and the log is a prefix of what was
// published, at the same offsets.
RC_GTEST_PROP(DurableMappedSegments, APowerCutUnderNoneLeavesAPrefixAndNeverReadsAsDamage, ()) {
  const Run run = gen_run();
  const auto disk = publish_then_cut_the_power(run, FsyncPolicy::none());
  std::unique_ptr<Broker> b;
  try {
    b = open(disk, FsyncPolicy::none(), run.segment_bytes);
  } catch (const Error& e) {
    RC_FAIL(std::string("the reopen after a power cut threw: ") + e.what() + "\n" +
            disk->describe());
  }
  const std::vector<std::string> kept = log_of(*b, "reader");
  RC_ASSERT(kept.size() <= run.published.size());
  for (std::size_t i = 0; i < kept.size(); ++i) RC_ASSERT(kept[i] == run.published[i]);
  RC_TAG(kept.size() == run.published.size() ? "all kept" : "some lost");
}

// R19 `always`: every publish that returned survives the power cut, whatever pages of it
// went back when (its sync made them durable).
RC_GTEST_PROP(DurableMappedSegments, APowerCutUnderAlwaysLosesNothingThatReturned, ()) {
  const Run run = gen_run();
  const auto disk = publish_then_cut_the_power(run, FsyncPolicy::always());
  auto b = open(disk, FsyncPolicy::always(), run.segment_bytes);
  RC_ASSERT(log_of(*b, "reader") == run.published);
}

// R21: a bit flipped at rest in any record is never lost silently. In a segment before the
// newest it is CorruptLog; in the newest it is CorruptLog, or (the last record, or a record
// one of whose pages ends in zeros, which a lost page cannot be told from) a torn tail that
// is reported where the log now ends, and the log that stays is a prefix.
RC_GTEST_PROP(DurableMappedSegments, ABitFlippedInARecordIsCorruptLogOrAReportedTornTail, ()) {
  // Records of up to 700 bytes, so a few dozen fill several segments and pages.
  const auto payloads = *rc::gen::nonEmpty(rc::gen::container<std::vector<std::string>>(
      rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 700), [](std::size_t n) {
        return rc::gen::container<std::string>(n, rc::gen::inRange<char>(1, 127));
      })));
  const auto segment_bytes = *rc::gen::inRange<std::uint64_t>(256, 40000);
  const auto disk = std::make_shared<SimFileSystem>();
  {
    auto b = open(disk, FsyncPolicy::none(), segment_bytes);
    b->create_topic("t");
    for (const std::string& p : payloads) b->publish("t", p);
  }  // a clean close: files cut to their records
  std::vector<std::string> segments;
  for (const std::string& f : disk->files()) {
    if (f.ends_with(".seg")) segments.push_back(f);
  }
  RC_PRE(!segments.empty());
  const std::string file = *rc::gen::elementOf(segments);
  const std::uint64_t size = disk->size(file);
  RC_PRE(size > 24);  // past the header (its own damage is another rule)
  const std::uint64_t byte = *rc::gen::inRange<std::uint64_t>(24, size);
  disk->flip_bit(file, byte, *rc::gen::inRange(0, 8));
  const bool newest = file == segments.back();
  std::unique_ptr<Broker> b;
  try {
    b = open(disk, FsyncPolicy::none(), segment_bytes);
  } catch (const CorruptLog&) {
    RC_TAG(newest ? "CorruptLog, newest segment" : "CorruptLog, older segment");
    return;
  }
  RC_ASSERT(newest);
  const std::vector<Truncation>& cuts = b->recovery().truncations;
  RC_ASSERT(cuts.size() == 1u);
  RC_ASSERT(cuts[0].reason == std::string("torn tail"));
  RC_ASSERT(cuts[0].bytes > 0u);
  const std::vector<std::string> kept = log_of(*b, "reader");
  RC_ASSERT(kept.size() == cuts[0].first_offset);  // where the log now ends
  RC_ASSERT(kept.size() < payloads.size());
  for (std::size_t i = 0; i < kept.size(); ++i) RC_ASSERT(kept[i] == payloads[i]);
  RC_TAG(kept.size() + 1 == payloads.size() ? "torn tail, the last record"
                                            : "torn tail, a page ending in zeros");
}

// R33 on a mapped segment: a full disk refuses the extension a publish needs; the publish
// throws IoError having stored nothing, the store stays failed, and the reopen finds the
// log as it was.
TEST(DurableMappedSegments, AFullDiskRefusesTheNextExtensionAndNothingIsStored) {
  const auto disk = std::make_shared<SimFileSystem>();
  auto b = open(disk, FsyncPolicy::always(), 64 << 20);
  b->create_topic("t");
  const std::string big(600 << 10, 'x');  // the second needs a second step of 1 MiB
  b->publish("t", big);
  disk->fail_next(SimFileSystem::Call::kExtend, 1, std::errc::no_space_on_device);
  EXPECT_THROW(b->publish("t", big), IoError);
  ASSERT_TRUE(b->storage_failure());
  EXPECT_NE(b->storage_failure()->find("extend /store/"), std::string::npos)
      << *b->storage_failure();
  EXPECT_THROW(b->publish("t", "a"), IoError);
  b.reset();
  b = open(disk, FsyncPolicy::always(), 64 << 20);
  EXPECT_EQ(log_of(*b, "reader"), std::vector<std::string>{big});
  EXPECT_TRUE(b->recovery().truncations.empty());
}

// R19: a failed sync of a mapped segment (msync's EIO) fails the publish and the store,
// as a failed fdatasync of an appended one did.
TEST(DurableMappedSegments, AFailedSyncOfTheMappingFailsThePublishAndTheStore) {
  const auto disk = std::make_shared<SimFileSystem>();
  auto b = open(disk, FsyncPolicy::always(), 64 << 20);
  b->create_topic("t");
  b->publish("t", "a");
  disk->fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(b->publish("t", "b"), IoError);
  EXPECT_THROW(b->publish("t", "c"), IoError);
  b.reset();
  b = open(disk, FsyncPolicy::always(), 64 << 20);
  EXPECT_EQ(log_of(*b, "reader"), std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace broker
