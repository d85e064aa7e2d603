// Partitioned topics (SPEC R29) through the public API: the partitioners against Kafka's
// and Java's own outputs and seed 003's table, routing, explicit partitions, the typed
// errors (each changes nothing), and a durable broker that reopens its directory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/partitioner.h"
#include "test_support.h"

namespace broker {
namespace {

PullOptions from_beginning() {
  PullOptions o;
  o.ack_timeout = Millis{1000};
  o.start = StartPosition::beginning();
  return o;
}

TopicOptions partitioned(std::uint32_t n, Partitioner p = Partitioner::kMurmur2) {
  TopicOptions o;
  o.partitions = n;
  o.partitioner = p;
  return o;
}

// Kafka's Utils.murmur2 on these inputs (the values Kafka's and Akka's tests pin).
TEST(Partitions, Murmur2IsKafkasBitForBit) {
  const std::map<std::string, std::int32_t> kafka = {
      {"1", -1993445489},
      {"12", 126087238},
      {"123", -267702483},
      {"1234", -1614185708},
      {"12345", -1188365604},
      {"21", -973932308},
      {"foobar", -790332482},
      {"a-little-bit-long-string", -985981536},
      {"a-little-bit-longer-string", -1486304829},
      {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
      {"abc", 479470107}};
  for (const auto& [key, hash] : kafka) EXPECT_EQ(kafka_murmur2(key), hash) << key;
}

// Kafka's partition: the sign bit cleared, not abs (so -1993445489 gives 154038159).
TEST(Partitions, Murmur2PartitionClearsTheSignBit) {
  EXPECT_EQ(partition_for_key(Partitioner::kMurmur2, "1", 1000), 154038159u % 1000);
  EXPECT_EQ(partition_for_key(Partitioner::kMurmur2, "12", 7), 126087238u % 7);
}

TEST(Partitions, JavaHashIsStringHashCode) {
  EXPECT_EQ(java_string_hash(""), 0);
  EXPECT_EQ(java_string_hash("a"), 97);
  EXPECT_EQ(java_string_hash("hello"), 99162322);
  EXPECT_EQ(java_string_hash("order-0"), -1207111311);  // negative: Math.abs matters
  EXPECT_EQ(java_string_hash("polygenelubricants"), INT32_MIN);
}

// A key is text in UTF-8 to seed 003's Java broker: its chars are UTF-16 code units (a
// code point above U+FFFF is two), and an ill-formed sequence's maximal subpart is U+FFFD.
TEST(Partitions, R29JavaHashReadsTheKeyAsUtf8IntoUtf16) {
  EXPECT_EQ(java_string_hash("\xc3\xa9"), 233);                         // "é" is one char
  EXPECT_EQ(java_string_hash("\xf0\x9f\x98\x80"), 55357 * 31 + 56832);  // U+1F600: a pair
  EXPECT_EQ(java_string_hash("\xff"), 0xFFFD);                          // never a lead byte
  EXPECT_EQ(java_string_hash("\xe0\xa0"), 0xFFFD);                      // a truncated sequence: one
  EXPECT_EQ(java_string_hash("\xed\xa0\x80"), (0xFFFD * 31 + 0xFFFD) * 31 + 0xFFFD);  // surrogate
}

// Generated keys from the whole byte range (random bytes, UTF-8 of random code points,
// truncated and overlong sequences, NULs), each hashed by the broker and by
// tests/reference/partitioners.py, which implements Kafka's Utils.murmur2 and Java's
// String.hashCode from their published definitions (Python's own UTF-8 decoding).
TEST(Partitions, R29PartitionersMatchIndependentReferencesOnGeneratedBytes) {
  std::mt19937_64 rng(29);
  const auto utf8 = [](std::uint32_t cp) {
    std::string out;
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | cp >> 6), out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | cp >> 12);
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3F)),
          out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | cp >> 18), out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3F)),
          out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return out;
  };
  std::vector<std::string> keys = {"", "a", "order-0", "polygenelubricants"};
  for (int i = 0; i < 3000; ++i) {
    std::string key;
    const std::size_t parts = rng() % 8;
    for (std::size_t p = 0; p < parts; ++p) {
      switch (rng() % 4) {
        case 0:  // any byte, NUL and 0x80-0xFF included
          key += static_cast<char>(rng() % 256);
          break;
        case 1:  // a code point of any plane (surrogates, encoded anyway, are ill-formed)
          key += utf8(static_cast<std::uint32_t>(rng() % 0x110000));
          break;
        case 2: {  // a sequence cut short
          const std::string whole = utf8(0x80 + static_cast<std::uint32_t>(rng() % 0x10FF80));
          key += whole.substr(0, 1 + rng() % whole.size());
          break;
        }
        default:
          key += static_cast<char>('a' + rng() % 26);
      }
    }
    keys.push_back(key);
  }
  const testing::TempDir dir;
  const std::string in = dir.str() + "/keys", out = dir.str() + "/hashes";
  {
    std::ofstream f(in);
    for (const std::string& k : keys) {
      for (unsigned char c : k) f << "0123456789abcdef"[c >> 4] << "0123456789abcdef"[c & 15];
      f << '\n';
    }
  }
  const std::string script = (std::filesystem::path(REFERENCE_DIR) / "partitioners.py").string();
  ASSERT_EQ(std::system(("python3 '" + script + "' < '" + in + "' > '" + out + "'").c_str()), 0);
  std::ifstream f(out);
  std::size_t high = 0;
  for (const std::string& key : keys) {
    std::int32_t murmur = 0, java = 0;
    ASSERT_TRUE(f >> murmur >> java) << "the reference stopped early";
    EXPECT_EQ(kafka_murmur2(key), murmur) << ::testing::PrintToString(key);
    EXPECT_EQ(java_string_hash(key), java) << ::testing::PrintToString(key);
    for (unsigned char c : key) high += c >= 0x80 ? 1 : 0;
  }
  EXPECT_GT(high, keys.size());  // the generator reaches the bytes that matter
}

// Seed 003's output: "Produced order-0 -> partition 1 ... order-3 -> partition 0" (its
// offsets 0 and 24 are byte positions in its file; here offsets count messages).
TEST(Partitions, Seed003TableIsReproduced) {
  Broker b;
  b.create_topic("orders", partitioned(2, Partitioner::kJavaHashCode));
  std::vector<Placement> got;
  for (int i = 0; i < 4; ++i) {
    got.push_back(
        b.send("orders", "payload-" + std::to_string(i), {}, "order-" + std::to_string(i)));
  }
  EXPECT_EQ(got, (std::vector<Placement>{{1, 0}, {0, 0}, {1, 1}, {0, 1}}));
  EXPECT_EQ(b.end_offset("orders-0"), 2u);
  EXPECT_EQ(b.end_offset("orders-1"), 2u);
}

TEST(Partitions, JavasMinValueHashStillLandsInRange) {
  for (std::uint32_t n : {2u, 3u, 7u, 1024u}) {
    const std::uint32_t p = partition_for_key(Partitioner::kJavaHashCode, "polygenelubricants", n);
    EXPECT_EQ(p, static_cast<std::uint32_t>((std::uint64_t{1} << 31) % n)) << n;
  }
}

TEST(Partitions, TheSameKeyAlwaysGoesToTheSamePartitionInOrder) {
  Broker b;
  b.create_topic("t", partitioned(4));
  std::map<std::string, std::set<std::uint32_t>> where;
  for (int i = 0; i < 40; ++i) {
    const std::string key = "customer-" + std::to_string(i % 5);
    where[key].insert(b.send("t", "m" + std::to_string(i), {}, key).partition);
  }
  for (const auto& [key, parts] : where) EXPECT_EQ(parts.size(), 1u) << key;
  // Within a partition a key's messages keep their publish order.
  b.subscribe_pull("t-" + std::to_string(*where["customer-0"].begin()), "p", from_beginning());
  std::vector<std::string> seen;
  for (const Received& r :
       b.poll("t-" + std::to_string(*where["customer-0"].begin()), "p", "w", 100)) {
    if (std::string(r.message->key()) == "customer-0")
      seen.push_back(std::string(r.message->payload()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"m0", "m5", "m10", "m15", "m20", "m25", "m30", "m35"}));
}

TEST(Partitions, MessagesWithoutAKeyGoRoundRobinFromPartitionZero) {
  Broker b;
  b.create_topic("t", partitioned(3));
  std::vector<std::uint32_t> parts;
  for (int i = 0; i < 7; ++i) parts.push_back(b.send("t", "m").partition);
  EXPECT_EQ(parts, (std::vector<std::uint32_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(b.publish("t", "m"), 2u);  // partition 1's third message
  EXPECT_EQ(b.end_offset("t-1"), 3u);
}

TEST(Partitions, PublishToNamesThePartitionWhateverTheKey) {
  Broker b;
  b.create_topic("t", partitioned(2));
  EXPECT_EQ(b.publish_to("t", 1, "a", {}, "order-1"), 0u);
  EXPECT_EQ(b.publish_to("t", 1, "b"), 1u);
  EXPECT_EQ(b.end_offset("t-0"), 0u);
  b.create_topic("plain");
  EXPECT_EQ(b.publish_to("plain", 0, "c"), 0u);
}

TEST(Partitions, EachPartitionIsATopicWithItsOwnSubscriptionsAndRetention) {
  Broker b;
  TopicOptions o = partitioned(2);
  o.retention_messages = 2;
  b.create_topic("t", o);
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"t", "t-0", "t-1"}));
  EXPECT_EQ(b.partitions("t"), 2u);
  EXPECT_EQ(b.partitions("t-0"), 1u);
  for (int i = 0; i < 5; ++i) b.publish_to("t", 0, "m" + std::to_string(i));
  EXPECT_EQ(b.oldest_offset("t-0"), 3u);  // retention per partition
  EXPECT_EQ(b.oldest_offset("t-1"), 0u);
  std::vector<std::string> got;
  PushOptions from_start;
  from_start.start = StartPosition::beginning();
  b.subscribe(
      "t-0", "s",
      [&](const Delivery& d) {
        got.push_back(*d.topic + "@" + std::to_string(d.message->offset()));
        return true;
      },
      from_start);
  b.drain();
  EXPECT_EQ(got, (std::vector<std::string>{"t-0@3", "t-0@4"}));
}

// R29: what a user asks of the whole topic: how many messages it ever took, and a group's
// counters and lag over every partition (each partition's own answer, added up).
TEST(Partitions, APartitionedTopicTotalsItsEndStatsAndLag) {
  auto clock = std::make_shared<ManualClock>(at(Millis{1'000}));
  Broker b(BrokerOptions::synchronous().with_clock(clock));
  b.create_topic("orders", partitioned(3));
  GroupOptions g;
  g.pull.start = StartPosition::beginning();
  b.join_group("orders", "billing", "A", g);
  for (std::uint32_t p = 0; p < 3; ++p) {
    for (std::uint32_t i = 0; i <= p; ++i) {
      b.publish_to("orders", p, "m" + std::to_string(p) + std::to_string(i));
      clock->advance(Millis{100});  // orders-0's message is the oldest
    }
  }
  EXPECT_EQ(b.end_offset("orders"), 6u) << "1 + 2 + 3 messages";
  const std::vector<Received> got = b.poll_group("orders", "billing", "A", 3);  // one each
  ASSERT_EQ(got.size(), 3u);
  ASSERT_TRUE(b.ack(got[0].receipt));  // orders-0's only message: that partition is done
  SubscriptionStats sum;
  for (std::uint32_t p = 0; p < 3; ++p) {
    const SubscriptionStats s = b.stats(partition_name("orders", p), "billing");
    sum.committed += s.committed;
    sum.cursor += s.cursor;
    sum.backlog += s.backlog;
    sum.in_flight += s.in_flight;
    sum.delivered += s.delivered;
    sum.confirmed += s.confirmed;
  }
  const SubscriptionStats total = b.stats("orders", "billing");
  EXPECT_EQ(total, sum);
  EXPECT_EQ(total.committed, 1u);
  EXPECT_EQ(total.in_flight, 2u);
  EXPECT_EQ(total.backlog, 3u);
  // Lag: 5 not yet confirmed; the oldest is orders-1's first, published at 1,100 ms.
  EXPECT_EQ(b.lag("orders", "billing"), (Lag{5, clock->now() - at(Millis{1'100})}));
  // paused only when every partition's subscription is
  for (std::uint32_t p = 0; p < 3; ++p) b.subscribe_pull(partition_name("orders", p), "audit", {});
  b.pause("orders-0", "audit");
  b.pause("orders-2", "audit");
  EXPECT_FALSE(b.stats("orders", "audit").paused);
  b.pause("orders-1", "audit");
  EXPECT_TRUE(b.stats("orders", "audit").paused);
  // a name some partition lacks is unknown, as on that partition
  b.subscribe_pull("orders-1", "only-one", {});
  EXPECT_EQ(testing::code_of([&] { (void)b.stats("orders", "only-one"); }),
            ErrorCode::kUnknownSubscription);
  EXPECT_EQ(testing::code_of([&] { (void)b.lag("orders", "only-one"); }),
            ErrorCode::kUnknownSubscription);
}

TEST(Partitions, BadInputIsATypedErrorAndChangesNothing) {
  Broker b;
  EXPECT_EQ(testing::code_of([&] { b.create_topic("t", partitioned(0)); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(testing::code_of([&] { b.create_topic("t", partitioned(kMaxPartitions + 1)); }),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(b.topics().empty());
  b.create_topic("t-1");
  EXPECT_EQ(testing::code_of([&] { b.create_topic("t", partitioned(3)); }),
            ErrorCode::kDuplicateTopic);
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"t-1"}));  // not "t", not "t-0"
  b.create_topic("u", partitioned(2));
  EXPECT_EQ(testing::code_of([&] { b.publish_to("u", 2, "m"); }), ErrorCode::kPartitionOutOfRange);
  EXPECT_EQ(testing::code_of([&] { b.publish_to("t-1", 1, "m"); }),
            ErrorCode::kPartitionOutOfRange);
  EXPECT_EQ(testing::code_of([&] { b.publish_to("nope", 0, "m"); }), ErrorCode::kUnknownTopic);
  EXPECT_EQ(b.end_offset("u-0") + b.end_offset("u-1") + b.end_offset("t-1"), 0u);
  // The partitioned topic routes and totals; everything else names a partition.
  EXPECT_EQ(b.end_offset("u"), 0u);
  EXPECT_EQ(testing::code_of([&] { (void)b.oldest_offset("u"); }), ErrorCode::kWrongKind);
  EXPECT_EQ(testing::code_of([&] { b.subscribe_pull("u", "p", {}); }), ErrorCode::kWrongKind);
  EXPECT_EQ(testing::code_of([&] { (void)b.subscriptions("u"); }), ErrorCode::kWrongKind);
  EXPECT_EQ(testing::code_of([&] { b.delete_topic("u-0"); }), ErrorCode::kWrongKind);
  b.subscribe_pull("u-1", "p", {});
  EXPECT_EQ(testing::code_of([&] { b.delete_topic("u"); }), ErrorCode::kTopicInUse);
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"t-1", "u", "u-0", "u-1"}));
  b.unsubscribe("u-1", "p");
  b.delete_topic("u");
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"t-1"}));
}

TEST(Partitions, ADurableBrokerReopensItsPartitionsAndStartsTheTurnAgain) {
  testing::TempDir dir("broker-partitions");
  {
    Broker b(testing::durable_in(dir));
    b.create_topic("orders", partitioned(3, Partitioner::kJavaHashCode));
    b.create_topic("gone", partitioned(2));
    b.send("orders", "a");
    b.send("orders", "b");
    b.send("orders", "c", {}, "order-0");
    b.subscribe_pull("orders-1", "p", from_beginning());
    b.delete_topic("gone");
  }
  Broker b(testing::durable_in(dir));
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"orders", "orders-0", "orders-1", "orders-2"}));
  EXPECT_EQ(b.partitions("orders"), 3u);
  EXPECT_EQ(b.send("orders", "d", {}, "order-0").partition,
            partition_for_key(Partitioner::kJavaHashCode, "order-0", 3));  // partitioner kept
  EXPECT_EQ(b.send("orders", "e").partition, 0u);                          // the turn is not saved
  const std::vector<Received> got = b.poll("orders-1", "p", "w", 10);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0].message->payload(), "b");
}

}  // namespace
}  // namespace broker
