// SPEC R18-R21 on the real file system: what a restarted broker rebuilds (seed 003's
// FileBrokerTest, seed 000's "survive a restart"), and the typed errors of a directory
// that is not ours, locked, newer, torn or corrupt.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

namespace fs = std::filesystem;

/// This suite's temporary directories.
class TempDir : public testing::TempDir {
 public:
  TempDir() : testing::TempDir("broker-durable") {}
};

BrokerOptions durable(const TempDir& dir, StorageOptions o = {}) {
  o.directory = dir.str() + "/store";
  return BrokerOptions::synchronous().with_storage(o);
}

/// Every file under dir with its bytes: "nothing on disk changed" compares two of these.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out[e.path().string()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return out;
}

std::vector<fs::path> segments(const TempDir& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir.path() / "store")) {
    if (e.path().extension() == ".seg") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

PullOptions pull_from_beginning() {
  PullOptions o;
  o.start = StartPosition::beginning();
  return o;
}

PullOptions pull_with_timeout(Millis t) {
  PullOptions o;
  o.ack_timeout = t;
  return o;
}

PushOptions push_with_max(int max) {
  PushOptions o;
  o.max_deliveries = max;
  return o;
}

TopicOptions keep_last(std::size_t n) {
  TopicOptions o;
  o.retention_messages = n;
  return o;
}

std::vector<std::string> drain_keys(Broker& b, const std::string& sub) {
  std::vector<std::string> keys;
  for (;;) {
    auto got = b.poll("test", sub, "w", 10);
    if (got.empty()) return keys;
    for (const auto& r : got) {
      keys.push_back(std::string(r.message->key()));
      EXPECT_TRUE(b.ack(r.receipt));
    }
  }
}

// Memory and disk share one shape: the body of a message's record in its segment file is
// the bytes a handler reads (Message::record), before a restart and after it.
TEST(DurableRecords, TheFileHoldsTheRecordAHandlerReads) {
  TempDir dir;
  std::string before;
  {
    Broker b(durable(dir));
    b.create_topic("t");
    b.subscribe_pull("t", "p", pull_from_beginning());
    b.publish("t", "payload", {{"h", "v"}}, "key");
    const auto got = b.poll("t", "p", "w", 1);
    ASSERT_EQ(got.size(), 1u);
    before = std::string(got[0].message->record());
  }
  const std::vector<fs::path> files = segments(dir);
  ASSERT_EQ(files.size(), 1u);
  const std::string bytes = snapshot(dir.path() / "store").at(files[0].string());
  constexpr std::size_t kFileHeader = 24, kFrameHeader = 12;
  ASSERT_EQ(bytes.size(), kFileHeader + kFrameHeader + before.size());
  EXPECT_EQ(bytes.substr(kFileHeader + kFrameHeader), before);
  Broker again(durable(dir));
  again.subscribe_pull("t", "q", pull_from_beginning());
  const auto got = again.poll("t", "q", "w", 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message->record(), before);
}

TEST(Seed003FileBroker, RestartedBrokerReplaysTheLogOncePerGroup) {
  TempDir dir;
  {
    Broker broker(durable(dir));
    broker.create_topic("test");
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(broker.publish("test", "value" + std::to_string(i), {}, "key" + std::to_string(i)),
                static_cast<Offset>(i));
    }
  }  // simulate broker restart
  Broker broker2(durable(dir));
  EXPECT_EQ(broker2.topics(), std::vector<std::string>{"test"});
  // The seed calls createTopic again after the restart; here the topic is back already.
  EXPECT_THROW(broker2.create_topic("test"), DuplicateTopic);
  for (const std::string group : {"groupA", "groupB"}) {
    broker2.subscribe_pull("test", group, pull_from_beginning());
    EXPECT_EQ(drain_keys(broker2, group), (std::vector<std::string>{"key0", "key1", "key2"}))
        << group;
  }
  EXPECT_EQ(broker2.end_offset("test"), 3u);
  EXPECT_EQ(broker2.publish("test", "value3", {}, "key3"), 3u);  // offsets go on, absolute
}

// Seed 003's restart test as written, with create-if-absent: the program's start-up creates
// its topics every time it runs; on the reopened broker they are there, nothing changes,
// and a topic asked for with other options is refused, not silently taken.
TEST(Seed003FileBroker, StartUpCreatesItsTopicsIfAbsentOnEveryRun) {
  TempDir dir;
  TopicOptions kept;
  kept.retention_messages = 100;
  for (int run = 0; run < 2; ++run) {
    Broker broker(durable(dir));
    EXPECT_EQ(broker.create_topic_if_absent("test", kept), run == 0) << "run " << run;
    EXPECT_EQ(broker.create_topic_if_absent("caf\xc3\xa9"), run == 0) << "run " << run;
    EXPECT_EQ(broker.publish("test", "value" + std::to_string(run)), static_cast<Offset>(run));
  }
  Broker broker(durable(dir));
  EXPECT_EQ(broker.topics(), (std::vector<std::string>{"test", "caf\xc3\xa9"}));
  const auto before = snapshot(dir.path() / "store");
  TopicOptions other = kept;
  other.retention_messages = 5;
  EXPECT_THROW(broker.create_topic_if_absent("test", other), OptionsMismatch);
  EXPECT_THROW(broker.create_topic_if_absent(""), InvalidArgument);
  EXPECT_FALSE(broker.create_topic_if_absent("test", kept));
  EXPECT_EQ(snapshot(dir.path() / "store"), before)
      << "a refusal, or a topic already there, wrote nothing";
  EXPECT_EQ(broker.end_offset("test"), 2u);
  TopicOptions partitioned;
  partitioned.partitions = 2;
  EXPECT_TRUE(broker.create_topic_if_absent("p", partitioned));
  EXPECT_THROW(broker.create_topic_if_absent(partition_name("p", 0)), OptionsMismatch)
      << "a partition's name";
  EXPECT_FALSE(broker.create_topic_if_absent("p", partitioned));
}

// R20: a restart brings push subscriptions and push groups back without handlers; the
// broker lists them, and each leaves the list once a subscribe (a member's, for a group)
// resumes it where it stood. Pull subscriptions never wait.
TEST(Seed003FileBroker, ARestartListsThePushSubscriptionsWaitingForAHandler) {
  TempDir dir;
  const auto yes = [](const Delivery&) { return true; };
  PushOptions in_group;
  in_group.group = "billing";
  {
    Broker b(durable(dir));
    EXPECT_TRUE(b.waiting_for_handler().empty());
    b.create_topic("orders");
    b.create_topic("audit");
    b.subscribe("orders", "ship", yes);
    b.subscribe("orders", "w1", yes, in_group);
    b.subscribe("orders", "w2", yes, in_group);
    b.subscribe("audit", "log", yes);
    b.subscribe_pull("orders", "pull", {});
    EXPECT_TRUE(b.waiting_for_handler().empty()) << "every push subscription has a handler";
  }
  Broker b(durable(dir));
  EXPECT_EQ(b.waiting_for_handler(), (std::vector<WaitingSubscription>{
                                         {"audit", "log", false},
                                         {"orders", "billing", true},
                                         {"orders", "ship", false},
                                     }));
  b.publish("orders", "o1");
  b.drain();
  EXPECT_EQ(b.stats("orders", "ship").delivered, 0u) << "no handler, no offer";
  for (const WaitingSubscription& w : b.waiting_for_handler()) {
    if (!w.group) b.subscribe(w.topic, w.name, yes);
  }
  EXPECT_EQ(b.waiting_for_handler(),
            (std::vector<WaitingSubscription>{{"orders", "billing", true}}));
  b.subscribe("orders", "w3", yes, in_group);
  EXPECT_TRUE(b.waiting_for_handler().empty());
  b.drain();
  EXPECT_EQ(b.stats("orders", "ship").confirmed, 1u) << "resumed where it stood";
  EXPECT_EQ(b.stats("orders", "billing").confirmed, 1u);
}

// R20: resubscribe resumes what the list names with the options the broker saved, so the
// program that restarts need not repeat them; anything that does not wait is refused.
TEST(Seed003FileBroker, ResubscribeResumesWithTheSavedOptions) {
  TempDir dir;
  int rejected = 0;
  const auto reject = [&](const Delivery&) { return ++rejected, false; };
  PushOptions picky;
  picky.header_filter = {{"type", "paid"}};
  picky.max_deliveries = 1;
  picky.start = StartPosition::beginning();
  PushOptions in_group;
  in_group.group = "billing";
  {
    Broker b(durable(dir));
    b.create_topic("orders");
    b.publish("orders", "before", {{"type", "paid"}});
    b.subscribe(
        "orders", "ship", [](const Delivery&) { return true; }, picky);
    b.subscribe(
        "orders", "w1", [](const Delivery&) { return true; }, in_group);
    b.drain();
  }
  Broker b(durable(dir));
  b.publish("orders", "free", {{"type", "free"}});
  b.publish("orders", "paid", {{"type", "paid"}});
  const std::vector<WaitingSubscription> waiting = b.waiting_for_handler();
  ASSERT_EQ(waiting, (std::vector<WaitingSubscription>{{"orders", "billing", true},
                                                       {"orders", "ship", false}}));
  EXPECT_THROW(b.resubscribe(waiting[1], reject, "w9"), InvalidArgument) << "not a group";
  EXPECT_THROW(b.resubscribe(waiting[0], reject), InvalidArgument) << "a group needs a member";
  EXPECT_THROW(b.resubscribe({"nope", "ship", false}, reject), UnknownTopic);
  EXPECT_THROW(b.resubscribe({"orders", "pack", false}, reject), UnknownSubscription);
  EXPECT_THROW(b.resubscribe({"orders", "ship", true}, reject, "w9"), UnknownSubscription)
      << "ship is no push group";
  b.resubscribe(waiting[1], reject);
  b.resubscribe(
      waiting[0], [](const Delivery&) { return true; }, "w2");
  EXPECT_TRUE(b.waiting_for_handler().empty());
  EXPECT_THROW(b.resubscribe(waiting[1], reject), UnknownSubscription) << "it has a handler";
  EXPECT_THROW(b.resubscribe(waiting[0], reject, "w2"), DuplicateSubscription);
  b.drain();
  EXPECT_EQ(rejected, 1) << "the saved filter: only 'paid' is offered";
  const SubscriptionStats ship = b.stats("orders", "ship");
  EXPECT_EQ(ship.filtered, 1u);
  EXPECT_EQ(ship.dead_lettered, 1u) << "the saved max_deliveries: one offer, not five";
  EXPECT_EQ(b.stats("orders", "billing").confirmed, 2u) << "the group resumed where it stood";
}

TEST(Seed000SurviveRestart, PositionsAttemptsAndDeadLettersComeBack) {
  TempDir dir;
  {
    Broker b(durable(dir));
    b.create_topic("test");
    b.subscribe(
        "test", "push", [](const Delivery& d) { return d.message->payload() != "bad"; },
        push_with_max(2));
    b.subscribe_pull("test", "pull", pull_with_timeout(Millis{100}));
    for (const char* p : {"a", "bad", "c"}) b.publish("test", p);
    for (int i = 0; i < 3; ++i) b.drain();  // a confirmed; bad dead after 2 offers; c confirmed
    auto got = b.poll("test", "pull", "w", 2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(b.ack(got[0].receipt));  // "a" confirmed; "bad" still held
    b.publish("test", "d");
  }
  Broker b(durable(dir));
  EXPECT_EQ(b.subscriptions("test"), (std::vector<std::string>{"push", "pull"}));
  EXPECT_EQ(b.stats("test", "push").committed, 3u);
  ASSERT_EQ(b.dead_letters("test", "push").size(), 1u);
  EXPECT_EQ(b.dead_letters("test", "push")[0].message->payload(), "bad");
  EXPECT_EQ(b.dead_letters("test", "push")[0].attempts, 2);
  // The push subscription is back without a handler; subscribe with its name resumes it.
  std::vector<std::string> seen;
  b.subscribe(
      "test", "push",
      [&](const Delivery& d) {
        seen.push_back(std::string(d.message->payload()));
        return true;
      },
      push_with_max(2));
  b.drain();
  EXPECT_EQ(seen, std::vector<std::string>{"d"});
  // Pull: the held message is not held any more and is offered again as attempt 2.
  const SubscriptionStats pull = b.stats("test", "pull");
  EXPECT_EQ(pull.committed, 1u);
  EXPECT_EQ(pull.in_flight, 0u);
  auto again = b.poll("test", "pull", "w", 10);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].message->payload(), "bad");
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(again[1].message->payload(), "c");
  EXPECT_EQ(again[1].attempt, 1);
}

TEST(DurableOptions, ResumingWithOtherOptionsIsOptionsMismatch) {
  TempDir dir;
  {
    Broker b(durable(dir));
    b.create_topic("test");
    b.subscribe(
        "test", "push", [](const Delivery&) { return true; }, push_with_max(3));
  }
  Broker b(durable(dir));
  EXPECT_THROW(b.subscribe(
                   "test", "push", [](const Delivery&) { return true; }, push_with_max(4)),
               OptionsMismatch);
  EXPECT_THROW(b.subscribe_pull("test", "push", PullOptions{}), WrongKind);
  EXPECT_EQ(b.stats("test", "push").committed, 0u);
  EXPECT_THROW(b.delete_topic("test"), TopicInUse);
  EXPECT_TRUE(b.unsubscribe("test", "push"));
  b.delete_topic("test");
}

TEST(DurableErrors, ADirectoryThatIsNotOursIsRefusedUntouched) {
  TempDir dir;
  fs::create_directories(dir.path() / "store");
  std::ofstream(dir.path() / "store" / "notes.txt") << "mine";
  const auto before = snapshot(dir.path());
  try {
    Broker b(durable(dir));
    FAIL() << "opened a foreign directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotBrokerStorage) << e.what();
  }
  EXPECT_EQ(snapshot(dir.path()), before);
}

TEST(DurableErrors, ADirectoryOpenInAnotherBrokerIsStorageLocked) {
  TempDir dir;
  Broker first(durable(dir));
  first.create_topic("test");
  const auto before = snapshot(dir.path());
  EXPECT_THROW(Broker second(durable(dir)), StorageLocked);
  EXPECT_EQ(snapshot(dir.path()), before);
}

void rewrite(const fs::path& p, std::size_t at, const std::string& bytes) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(DurableErrors, ANewerFormatVersionIsUnsupportedFormat) {
  TempDir dir;
  { Broker(durable(dir)).create_topic("test"); }
  // The journal header: magic (8) | version (4) | base (8) | crc32c of the 20 before (4).
  const fs::path journal = dir.path() / "store" / "journal";
  std::string header = snapshot(dir.path())[journal.string()].substr(0, 24);
  header[8] = 2;
  const std::uint32_t crc = crc32c(std::string_view(header).substr(0, 20));
  for (int i = 0; i < 4; ++i) header[20 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  rewrite(journal, 0, header);
  const auto before = snapshot(dir.path());
  EXPECT_THROW(Broker b(durable(dir)), UnsupportedFormat);
  EXPECT_EQ(snapshot(dir.path()), before);
}

TEST(DurableRecovery, ATornTailIsCutAndReported) {
  TempDir dir;
  {
    Broker b(durable(dir));
    b.create_topic("test");
    for (int i = 0; i < 3; ++i) b.publish("test", "m" + std::to_string(i));
  }
  const fs::path seg = segments(dir).back();
  const auto size = fs::file_size(seg);
  std::ofstream(seg, std::ios::app | std::ios::binary) << std::string("\x20\0\0\0garb", 8);
  Broker b(durable(dir));
  EXPECT_EQ(b.end_offset("test"), 3u);
  ASSERT_EQ(b.recovery().truncations.size(), 1u);
  const Truncation& t = b.recovery().truncations[0];
  EXPECT_EQ(t.file, seg.string());
  EXPECT_EQ(t.position, size);
  EXPECT_EQ(t.bytes, 8u);
  EXPECT_EQ(t.reason, "torn tail");
  EXPECT_EQ(fs::file_size(seg), size);
  EXPECT_EQ(b.publish("test", "m3"), 3u);
}

TEST(DurableRecovery, AChecksumFailureBeforeTheTailIsCorruptLogAndChangesNothing) {
  TempDir dir;
  {
    Broker b(durable(dir));
    b.create_topic("test");
    for (int i = 0; i < 3; ++i) b.publish("test", "payload-" + std::to_string(i));
  }
  const fs::path seg = segments(dir).front();
  // The first record's frame starts after the 24-byte header; flip a byte of its body.
  std::string bytes = snapshot(dir.path())[seg.string()];
  rewrite(seg, 24 + 12 + 3, std::string(1, static_cast<char>(bytes[24 + 12 + 3] ^ 0x10)));
  const auto before = snapshot(dir.path());
  try {
    Broker b(durable(dir));
    FAIL() << "opened a corrupt log";
  } catch (const CorruptLog& e) {
    EXPECT_EQ(e.file(), seg.string());
    EXPECT_EQ(e.position(), 24u);
  }
  EXPECT_EQ(snapshot(dir.path()), before);
  // Repair mode drops the bad record and everything after it, and says exactly that.
  StorageOptions repair;
  repair.repair = true;
  Broker b(durable(dir, repair));
  EXPECT_EQ(b.end_offset("test"), 0u);
  ASSERT_EQ(b.recovery().truncations.size(), 1u);
  EXPECT_EQ(b.recovery().truncations[0].reason, "corrupt record");
  EXPECT_EQ(b.recovery().truncations[0].first_offset, 0u);
  EXPECT_EQ(b.recovery().truncations[0].position, 24u);
}

TEST(DurableSegments, RetentionDeletesWholeSegmentsAndOffsetsStayAbsolute) {
  TempDir dir;
  StorageOptions small;
  small.segment_bytes = 256;
  {
    Broker b(durable(dir, small));
    b.create_topic("test", keep_last(5));
    b.subscribe_pull("test", "late", pull_from_beginning());
    for (int i = 0; i < 100; ++i) b.publish("test", "message-" + std::to_string(i));
    EXPECT_LT(segments(dir).size(), 10u);  // old segments are gone, whole
    EXPECT_GT(segments(dir).size(), 1u);
  }
  Broker b(durable(dir, small));
  EXPECT_EQ(b.oldest_offset("test"), 95u);
  EXPECT_EQ(b.end_offset("test"), 100u);
  // The subscription saved at 0 jumps to the oldest kept message and counts the gap (R3).
  auto got = b.poll("test", "late", "w", 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message->offset(), 95u);
  EXPECT_EQ(b.stats("test", "late").skipped, 95u);
}

TEST(DurableTopics, ADeletedTopicComesBackEmptyUnderItsOldName) {
  TempDir dir;
  {
    Broker b(durable(dir));
    b.create_topic("test");
    b.publish("test", "old");
    b.delete_topic("test");
    b.create_topic("test");
    b.publish("test", "new");
  }
  Broker b(durable(dir));
  b.subscribe_pull("test", "s", pull_from_beginning());
  auto got = b.poll("test", "s", "w", 10);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message->payload(), "new");
}

TEST(DurableJournal, CompactionKeepsEveryPositionAndBoundsTheJournal) {
  TempDir dir;
  StorageOptions o;
  o.journal_compact_bytes = 4096;
  {
    Broker b(durable(dir, o));
    b.create_topic("test");
    b.subscribe_pull("test", "s", PullOptions{});
    for (int i = 0; i < 500; ++i) {
      b.publish("test", "m");
      for (const auto& r : b.poll("test", "s", "w", 1)) b.ack(r.receipt);
    }
    EXPECT_LE(fs::file_size(dir.path() / "store" / "journal"), 4096u + 512u);
  }
  Broker b(durable(dir, o));
  EXPECT_EQ(b.stats("test", "s").committed, 500u);
}

}  // namespace
}  // namespace broker
