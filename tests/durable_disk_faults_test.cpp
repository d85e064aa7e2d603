// SPEC R33 on the simulated disk: a durable call whose write or sync fails throws IoError,
// the store stays failed (every later call throws IoError naming that first failure, and
// nothing is handed out), and reopening decides the failed call: it took effect or it did
// not, never half and never twice. The generic checks are in properties/ (the `fault` op
// in the durable mixes) and properties/crash (every I/O call of short scripts failed in
// turn); these are the two cases a reader looks for first.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "broker/broker.h"
#include "simfs/sim_file_system.h"

namespace broker {
namespace {

using sim::SimFileSystem;

/// A broker on a simulated disk, reopened at will; the disk outlives every broker.
class DiskFaults : public testing::Test {
 protected:
  std::unique_ptr<Broker> open() {
    StorageOptions o;
    o.directory = "/store";
    o.file_system = disk_;
    return std::make_unique<Broker>(BrokerOptions::synchronous().with_storage(o));
  }
  /// The payloads a new subscription from the beginning is handed, in offset order.
  std::vector<std::string> log_of(Broker& b, const std::string& topic) {
    PullOptions o;
    o.start = StartPosition::beginning();
    const std::string reader = "reader" + std::to_string(readers_++);
    b.subscribe_pull(topic, reader, o);
    std::vector<std::string> out;
    for (const Received& r : b.poll(topic, reader, "r", 100)) {
      out.emplace_back(r.message->payload());
    }
    return out;
  }
  /// Asserts that call throws IoError whose text names the first failure.
  template <class Call>
  static void refused(Call call, const std::string& first) {
    try {
      call();
      ADD_FAILURE() << "the call was not refused";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(first), std::string::npos) << e.what();
    }
  }

  std::shared_ptr<SimFileSystem> disk_ = std::make_shared<SimFileSystem>();
  int readers_ = 0;
};

// R33, publish: the sync of its record fails. It throws, its record is handed to no one,
// every later call is refused naming the failure, and the reopen decides: a kernel that
// dropped the unsynced bytes (Linux may) leaves the log without it.
TEST_F(DiskFaults, R33APublishWhoseSyncFailsIsRefusedAndNeverHandedOut) {
  auto b = open();
  b->create_topic("t");
  PullOptions from_start;
  from_start.start = StartPosition::beginning();
  b->subscribe_pull("t", "w", from_start);
  ASSERT_EQ(b->publish("t", "a"), 0u);
  EXPECT_FALSE(b->storage_failure());

  disk_->fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(b->publish("t", "b"), IoError);
  ASSERT_TRUE(b->storage_failure());
  const std::string first = *b->storage_failure();
  EXPECT_NE(first.find("sync /store/"), std::string::npos) << first;
  EXPECT_NE(first.find("Input/output error"), std::string::npos) << first;

  // Nothing more is handed out, written or answered: "b" never reaches a reader.
  refused([&] { b->poll("t", "w", "w1", 10); }, first);
  refused([&] { b->publish("t", "c"); }, first);
  refused([&] { (void)b->end_offset("t"); }, first);
  refused([&] { (void)b->stats("t", "w"); }, first);

  b.reset();
  b = open();
  EXPECT_FALSE(b->storage_failure());
  EXPECT_EQ(log_of(*b, "t"), std::vector<std::string>{"a"});
  const std::vector<Received> got = b->poll("t", "w", "w1", 10);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message->payload(), "a");
  // A publisher that got IoError retries after the reopen: the message is there once.
  EXPECT_EQ(b->publish("t", "b"), 1u);
  EXPECT_EQ(log_of(*b, "t"), (std::vector<std::string>{"a", "b"}));
}

// R33, publish on a kind kernel (the failed sync kept the bytes): the reopen finds the
// record, so the failed publish took effect, once. Either way is allowed; half is not.
TEST_F(DiskFaults, R33AFailedPublishThatTheDiskKeptComesBackOnceAfterTheReopen) {
  disk_->set_failed_sync_keeps(true);
  auto b = open();
  b->create_topic("t");
  b->publish("t", "a");
  disk_->fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(b->publish("t", "b"), IoError);
  b.reset();
  b = open();
  EXPECT_EQ(log_of(*b, "t"), (std::vector<std::string>{"a", "b"}));
}

// R33, ack: the sync of its commit fails. It throws, a second ack is refused (not "false":
// the first one's fate is not known yet), and the reopen decides: with the commit's bytes
// dropped, the message comes back as not confirmed, its attempt counted.
TEST_F(DiskFaults, R33AnAckWhoseCommitSyncFailsIsRefusedAndTheReopenDecides) {
  auto b = open();
  b->create_topic("t");
  PullOptions o;
  o.start = StartPosition::beginning();
  b->subscribe_pull("t", "w", o);
  b->publish("t", "a");
  const std::vector<Received> held = b->poll("t", "w", "w1", 1);
  ASSERT_EQ(held.size(), 1u);

  disk_->fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(b->ack(held[0].receipt), IoError);
  ASSERT_TRUE(b->storage_failure());
  const std::string first = *b->storage_failure();
  EXPECT_NE(first.find("/store/journal"), std::string::npos) << first;
  refused([&] { b->ack(held[0].receipt); }, first);
  refused([&] { b->poll("t", "w", "w1", 1); }, first);

  b.reset();
  b = open();
  const std::vector<Received> again = b->poll("t", "w", "w1", 1);
  ASSERT_EQ(again.size(), 1u) << "an ack that threw did not take effect here, so the "
                                 "message must come back (at least once)";
  EXPECT_EQ(again[0].message->payload(), "a");
  EXPECT_TRUE(b->ack(again[0].receipt));
}

// R33, ack on a kind kernel: the commit's bytes were kept, so the reopen finds the message
// confirmed; nothing is handed out again.
TEST_F(DiskFaults, R33AFailedAckThatTheDiskKeptIsConfirmedAfterTheReopen) {
  disk_->set_failed_sync_keeps(true);
  auto b = open();
  b->create_topic("t");
  PullOptions o;
  o.start = StartPosition::beginning();
  b->subscribe_pull("t", "w", o);
  b->publish("t", "a");
  const std::vector<Received> held = b->poll("t", "w", "w1", 1);
  ASSERT_EQ(held.size(), 1u);
  disk_->fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(b->ack(held[0].receipt), IoError);
  b.reset();
  b = open();
  EXPECT_TRUE(b->poll("t", "w", "w1", 1).empty());
  EXPECT_EQ(b->stats("t", "w").committed, 1u);
}

// R33: a failed sync is never tried again as a success. The kernel dropped the bytes it
// failed to write; a later sync that "succeeds" would confirm data the disk never got
// (PostgreSQL's fsyncgate). So once a sync failed, no later publish returns.
TEST_F(DiskFaults, R33NoCallReturnsAfterAFailedSyncUntilTheReopen) {
  auto b = open();
  b->create_topic("t");
  disk_->fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(b->publish("t", "a"), IoError);
  for (int i = 0; i < 3; ++i) EXPECT_THROW(b->publish("t", "again"), IoError);
  EXPECT_THROW(b->create_topic("u"), IoError);
  b.reset();
  b = open();
  EXPECT_TRUE(log_of(*b, "t").empty());
  EXPECT_EQ(b->publish("t", "a"), 0u);
}

// R34, pull: with durable_attempts a poll saves what it hands out before it returns, so a
// worker whose process dies with the message uses up an attempt each time; once
// max_deliveries were handed out, the next restart dead-letters it. Without the option a
// poll saves nothing new, and the message comes back at attempt 1 after every power cut.
TEST_F(DiskFaults, R34DurableAttemptsCountHandOutsThatNoAnswerFollowed) {
  for (const bool durable : {true, false}) {
    disk_ = std::make_shared<SimFileSystem>();
    auto b = open();
    b->create_topic("t");
    PullOptions o;
    o.start = StartPosition::beginning();
    o.max_deliveries = 2;
    o.durable_attempts = durable;
    b->subscribe_pull("t", "w", o);
    b->publish("t", "poison");
    std::vector<int> attempts;
    for (int death = 0; death < 3; ++death) {
      for (const Received& r : b->poll("t", "w", "w1", 1)) attempts.push_back(r.attempt);
      b.reset();  // the worker's process dies holding it: no ack, nack or expiry
      disk_->crash({.seed = static_cast<std::uint64_t>(death)});
      b = open();
    }
    if (durable) {
      EXPECT_EQ(attempts, (std::vector<int>{1, 2}));
      const std::vector<DeadLetter> dead = b->dead_letters("t", "w");
      ASSERT_EQ(dead.size(), 1u);
      EXPECT_EQ(dead[0].reason, "max deliveries");
      EXPECT_EQ(dead[0].attempts, 2);
    } else {
      EXPECT_EQ(attempts, (std::vector<int>{1, 1, 1}));
      EXPECT_TRUE(b->dead_letters("t", "w").empty());
    }
  }
}

// R34: the option is part of the subscription's options: another value is OptionsMismatch,
// and a restart keeps it.
TEST_F(DiskFaults, R34DurableAttemptsIsAnOptionThatARestartKeeps) {
  auto b = open();
  b->create_topic("t");
  PullOptions o;
  o.durable_attempts = true;
  b->subscribe_pull("t", "w", o);
  PullOptions other = o;
  other.durable_attempts = false;
  try {
    b->subscribe_pull("t", "w", other);
    ADD_FAILURE() << "another durable_attempts was accepted";
  } catch (const OptionsMismatch& e) {
    EXPECT_EQ(e.option(), "durable_attempts");
  }
  b.reset();
  b = open();
  EXPECT_NO_THROW(b->subscribe_pull("t", "w", o));
  EXPECT_THROW(b->subscribe_pull("t", "w", other), OptionsMismatch);
}

}  // namespace
}  // namespace broker
