// broker::Publisher, one rule per test: a publish through it is a publish by name, it finds
// a re-created topic and refuses a deleted one, it spreads over partitions as send does, and
// every lane delivers what it published.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"

namespace broker {
namespace {

TEST(PublisherRules, APublishThroughItIsAPublishByName) {
  Broker b;
  b.create_topic("t");
  std::vector<std::string> seen;
  b.subscribe("t", "s", [&](const Delivery& d) {
    seen.emplace_back(d.message->payload());
    return true;
  });
  Publisher p = b.publisher("t");
  EXPECT_EQ(p.topic(), "t");
  EXPECT_EQ(b.publish("t", "by name"), 0u);
  EXPECT_EQ(p.publish("through it", {{"h", "v"}}, "k"), 1u);
  EXPECT_EQ(b.end_offset("t"), 2u);
  b.drain();
  EXPECT_EQ(seen, (std::vector<std::string>{"by name", "through it"}));
}

TEST(PublisherRules, ForAnUnknownTopicItIsUnknownTopic) {
  Broker b;
  EXPECT_THROW((void)b.publisher("nope"), UnknownTopic);
}

TEST(PublisherRules, AfterADeleteItIsUnknownTopicAndAfterARecreateItPublishesToTheNewTopic) {
  Broker b;
  b.create_topic("t");
  Publisher p = b.publisher("t");
  EXPECT_EQ(p.publish("old 0"), 0u);
  EXPECT_EQ(p.publish("old 1"), 1u);
  b.delete_topic("t");
  EXPECT_THROW(p.publish("lost"), UnknownTopic);
  EXPECT_THROW(p.publish("lost again"), UnknownTopic);
  b.create_topic("t");
  std::vector<std::string> seen;
  b.subscribe("t", "s", [&](const Delivery& d) {
    seen.emplace_back(d.message->payload());
    return true;
  });
  // The new topic's first offset, not the old log's third.
  EXPECT_EQ(p.publish("new 0"), 0u);
  EXPECT_EQ(b.end_offset("t"), 1u);
  b.drain();
  EXPECT_EQ(seen, std::vector<std::string>{"new 0"});
}

TEST(PublisherRules, OnAPartitionedTopicItSpreadsAsSendDoes) {
  Broker by_name;
  Broker through;
  TopicOptions o;
  o.partitions = 3;
  by_name.create_topic("t", o);
  through.create_topic("t", o);
  Publisher p = through.publisher("t");
  for (const std::string key : {"", "", "a", "b", "", "a", "c", ""}) {
    EXPECT_EQ(p.send("m", {}, key), by_name.send("t", "m", {}, key)) << "key '" << key << "'";
  }
  // A partition's own name is a topic too.
  Publisher one = through.publisher(partition_name("t", 1));
  EXPECT_EQ(one.send("m", {}, "a").partition, 0u);
}

TEST(PublisherRules, EachThreadsPublisherDeliversEveryMessageOnLanes) {
  Broker b(BrokerOptions::lane());
  b.create_topic("t");
  constexpr int kThreads = 2, kEach = 20000;
  std::atomic<int> delivered{0};
  b.subscribe("t", "s", [&](const Delivery&) {
    delivered.fetch_add(1, std::memory_order_relaxed);
    return true;
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&b] {
      Publisher p = b.publisher("t");
      for (int m = 0; m < kEach; ++m) p.publish("m");
    });
  }
  for (auto& t : threads) t.join();
  // Bounded, generous: a lane works through 40k messages in milliseconds.
  for (int i = 0; i < 6000 && delivered.load() < kThreads * kEach; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(delivered.load(), kThreads * kEach);
  EXPECT_EQ(b.end_offset("t"), static_cast<Offset>(kThreads * kEach));
}

}  // namespace
}  // namespace broker
