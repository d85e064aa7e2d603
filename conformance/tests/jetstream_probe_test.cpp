// Raw probes: what nats-server itself does where the jetstream profile says it differs from
// the model, through libnats alone (no kit code between the test and the server). Each test
// is named after the profile switch it shows, so every switch of jetstream_profile() is
// seen on the real engine (CONFORMANCE.md).
//
// Times: AckWait is kAckWaitMs; a wait "past the deadline" is at least twice that, so the
// server's ack-wait timer (which runs about once per AckWait) has passed it.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "conformance/nats_server.h"
#include "conformance/profile.h"

namespace conformance {
namespace {

constexpr std::int64_t kAckWaitMs = 300;
constexpr std::int64_t kNs = 1000000;

void sleep_ms(std::int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void Check(natsStatus s, const char* what) {
  if (s != NATS_OK) throw std::runtime_error(std::string(what) + ": " + natsStatus_GetText(s));
}

// Stream `name` on subject name.s (file storage; MaxMsgs with DiscardOld). Throws
// std::runtime_error.
void AddStream(jsCtx* js, const std::string& name, std::int64_t max_msgs = -1) {
  const std::string subject = name + ".s";
  const char* subjects[] = {subject.c_str()};
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  sc.Name = name.c_str();
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;
  sc.MaxMsgs = max_msgs;
  sc.Discard = js_DiscardOld;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  Check(js_AddStream(nullptr, js, &sc, nullptr, &jerr), "add stream");
}

// AddStream and its durable pull consumer "d" (explicit acks, AckWait kAckWaitMs). Throws
// std::runtime_error.
void AddStreamAndConsumer(jsCtx* js, const std::string& name, std::int64_t max_msgs = -1,
                          std::int64_t max_deliver = -1, std::int64_t max_ack_pending = -1) {
  AddStream(js, name, max_msgs);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = "d";
  cc.AckPolicy = js_AckExplicit;
  cc.AckWait = kAckWaitMs * kNs;
  cc.MaxDeliver = max_deliver;
  cc.MaxAckPending = max_ack_pending;
  Check(js_AddConsumer(nullptr, js, name.c_str(), &cc, nullptr, &jerr), "add consumer");
}

// One message as the client got it: the stream sequence, its delivery count, and the handle
// its acks go through.
struct Got {
  std::uint64_t seq = 0;
  std::uint64_t delivered = 0;
  natsMsg* msg = nullptr;
};

// A connection, a stream and a durable pull consumer on it, and as many pull subscriptions
// bound to that consumer as asked (several workers of one durable).
class Raw {
 public:
  Raw(const std::string& url, const std::string& name, std::int64_t max_msgs = -1,
      std::int64_t max_deliver = -1, std::int64_t max_ack_pending = -1)
      : name_(name) {
    Check(natsConnection_ConnectTo(&nc_, url.c_str()), "connect");
    Check(natsConnection_JetStream(&js_, nc_, nullptr), "jetstream");
    subject_ = name + ".s";
    AddStreamAndConsumer(js_, name_, max_msgs, max_deliver, max_ack_pending);
    const std::string advisories = "$JS.EVENT.ADVISORY.CONSUMER.*." + name_ + ".d";
    Check(natsConnection_SubscribeSync(&advisories_, nc_, advisories.c_str()), "advisories");
  }
  ~Raw() {
    for (natsMsg* m : kept_) natsMsg_Destroy(m);
    for (natsSubscription* s : inboxes_) natsSubscription_Destroy(s);
    for (natsSubscription* s : pulls_) natsSubscription_Destroy(s);
    natsSubscription_Destroy(advisories_);
    js_DeleteStream(js_, name_.c_str(), nullptr, nullptr);
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  /// A new pull subscription bound to the durable (a worker); returns its index.
  int Worker() {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = name_.c_str();
    so.Consumer = "d";
    natsSubscription* sub = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    Check(js_PullSubscribe(&sub, js_, subject_.c_str(), "d", nullptr, &so, &jerr), "pull");
    pulls_.push_back(sub);
    return static_cast<int>(pulls_.size()) - 1;
  }
  void Publish(const std::string& payload) {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    Check(js_Publish(nullptr, js_, subject_.c_str(), payload.data(),
                     static_cast<int>(payload.size()), nullptr, &jerr),
          "publish");
  }
  /// Publishes "a" and fetches it for worker w: the one delivery a probe answers through
  /// (seq 0 if none came).
  Got PublishAndFetch(int w) {
    Publish("a");
    const std::vector<Got> got = Fetch(w, 1);
    return got.size() == 1 ? got[0] : Got{};
  }
  /// Up to n messages for worker w; waits at most wait_ms for the first.
  std::vector<Got> Fetch(int w, int n, std::int64_t wait_ms = 50) {
    jsFetchRequest req;
    jsFetchRequest_Init(&req);
    req.Batch = n;
    req.Expires = wait_ms * kNs;
    natsMsgList list{nullptr, 0};
    std::vector<Got> out;
    const natsStatus s = natsSubscription_FetchRequest(&list, pulls_[w], &req);
    if (s != NATS_OK) return out;
    for (int i = 0; i < list.Count; ++i) {
      jsMsgMetaData* meta = nullptr;
      Check(natsMsg_GetMetaData(&meta, list.Msgs[i]), "metadata");
      out.push_back(Got{meta->Sequence.Stream, meta->NumDelivered, list.Msgs[i]});
      jsMsgMetaData_Destroy(meta);
      kept_.push_back(list.Msgs[i]);
      list.Msgs[i] = nullptr;
    }
    natsMsgList_Destroy(&list);
    return out;
  }
  /// A pull request for one message, open for expires_ms, sent on the wire protocol from a
  /// fresh inbox, which is returned (the probe reads it, or not, as it likes).
  natsSubscription* OpenRequest(std::int64_t expires_ms) {
    natsInbox* inbox = nullptr;
    Check(natsInbox_Create(&inbox), "inbox");
    const std::string reply = inbox;
    natsInbox_Destroy(inbox);
    natsSubscription* sub = nullptr;
    Check(natsConnection_SubscribeSync(&sub, nc_, reply.c_str()), "subscribe inbox");
    inboxes_.push_back(sub);
    const std::string next = "$JS.API.CONSUMER.MSG.NEXT." + name_ + ".d";
    const std::string body = "{\"batch\":1,\"expires\":" + std::to_string(expires_ms * kNs) + "}";
    Check(natsConnection_PublishRequest(nc_, next.c_str(), reply.c_str(), body.data(),
                                        static_cast<int>(body.size())),
          "pull request");
    return sub;
  }
  /// A durable consumer `name` made through libnats to deliver from `start_ns`, and the
  /// start time the server reports for it.
  std::int64_t StartTimeAsStored(const std::string& name, std::int64_t start_ns) {
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = name.c_str();
    cc.AckPolicy = js_AckExplicit;
    cc.DeliverPolicy = js_DeliverByStartTime;
    cc.OptStartTime = start_ns;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    Check(js_AddConsumer(nullptr, js_, name_.c_str(), &cc, nullptr, &jerr), "add consumer");
    jsConsumerInfo* ci = nullptr;
    Check(js_GetConsumerInfo(&ci, js_, name_.c_str(), name.c_str(), nullptr, &jerr), "info");
    const std::int64_t stored = ci->Config->OptStartTime;
    jsConsumerInfo_Destroy(ci);
    return stored;
  }
  /// An ack-protocol word (+ACK, -NAK, +TERM, +WPI) sent through m's reply subject as a
  /// request: whether the server answered.
  bool Answer(const Got& m, const char* word) {
    natsMsg* reply = nullptr;
    const natsStatus s =
        natsConnection_RequestString(&reply, nc_, natsMsg_GetReply(m.msg), word, 2000);
    natsMsg_Destroy(reply);
    return s == NATS_OK;
  }
  /// The server's reply to an ack-protocol word sent as a request: its data and headers, or
  /// the status of a request that got none.
  std::string AnswerReply(const Got& m, const char* word) {
    natsMsg* reply = nullptr;
    const natsStatus s =
        natsConnection_RequestString(&reply, nc_, natsMsg_GetReply(m.msg), word, 2000);
    if (s != NATS_OK) return std::string("status ") + natsStatus_GetText(s);
    std::string out(natsMsg_GetData(reply), natsMsg_GetDataLength(reply));
    const char** keys = nullptr;
    int count = 0;
    if (natsMsgHeader_Keys(reply, &keys, &count) == NATS_OK) {
      for (int i = 0; i < count; ++i) {
        const char* value = nullptr;
        if (natsMsgHeader_Get(reply, keys[i], &value) == NATS_OK) {
          out += std::string(" ") + keys[i] + ": " + value;
        }
      }
      free(static_cast<void*>(keys));
    }
    natsMsg_Destroy(reply);
    return out;
  }
  /// Every advisory subject received so far (waiting up to wait_ms for the first).
  std::vector<std::string> Advisories(std::int64_t wait_ms) {
    std::vector<std::string> out;
    for (int i = 0; i < 1000; ++i) {
      natsMsg* m = nullptr;
      if (natsSubscription_NextMsg(&m, advisories_, i == 0 ? wait_ms : 0) != NATS_OK) break;
      out.push_back(std::string(natsMsg_GetSubject(m)) + " " +
                    std::string(natsMsg_GetData(m), natsMsg_GetDataLength(m)));
      natsMsg_Destroy(m);
    }
    return out;
  }
  /// The consumer's count of pull requests waiting on the server.
  int Waiting() {
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    Check(js_GetConsumerInfo(&ci, js_, name_.c_str(), "d", nullptr, &jerr), "consumer info");
    const int n = ci->NumWaiting;
    jsConsumerInfo_Destroy(ci);
    return n;
  }
  /// What consumer info counts: not yet delivered, delivered and unacknowledged, and the
  /// stream sequence of its ack floor.
  struct Counts {
    std::uint64_t pending = 0;
    std::int64_t ack_pending = 0;
    std::uint64_t floor = 0;
  };
  Counts Info() {
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    Check(js_GetConsumerInfo(&ci, js_, name_.c_str(), "d", nullptr, &jerr), "consumer info");
    const Counts c{ci->NumPending, ci->NumAckPending, ci->AckFloor.Stream};
    jsConsumerInfo_Destroy(ci);
    return c;
  }
  /// The consumer's count of delivered, unacknowledged messages.
  std::int64_t AckPending() {
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    Check(js_GetConsumerInfo(&ci, js_, name_.c_str(), "d", nullptr, &jerr), "consumer info");
    const std::int64_t n = ci->NumAckPending;
    jsConsumerInfo_Destroy(ci);
    return n;
  }

 private:
  std::string name_;
  std::string subject_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  natsSubscription* advisories_ = nullptr;
  std::vector<natsSubscription*> pulls_;
  std::vector<natsSubscription*> inboxes_;
  std::vector<natsMsg*> kept_;
};

class JetStreamRawProbe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new NatsServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static std::string Name() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  static NatsServer* server_;
};
NatsServer* JetStreamRawProbe::server_ = nullptr;

std::vector<std::uint64_t> seqs(const std::vector<Got>& got) {
  std::vector<std::uint64_t> out;
  for (const Got& g : got) out.push_back(g.seq);
  return out;
}

// late_ack_accepted: an ack after AckWait passed, before the message is fetched again,
// settles it: it never comes back.
TEST_F(JetStreamRawProbe, LateAckAccepted) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kLateAckAccepted));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const std::vector<Got> got = {raw.PublishAndFetch(w)};
  ASSERT_NE(got[0].seq, 0u);
  sleep_ms(3 * kAckWaitMs);
  EXPECT_TRUE(raw.Answer(got[0], "+ACK"));
  EXPECT_TRUE(raw.Fetch(w, 1, 2 * kAckWaitMs).empty());
  EXPECT_EQ(raw.AckPending(), 0);
}

// ack_after_nack_settles: a nacked message, acked by the same client before it is fetched
// again, is settled: it never comes back.
TEST_F(JetStreamRawProbe, AckAfterNackSettles) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kAckAfterNackSettles));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const std::vector<Got> got = {raw.PublishAndFetch(w)};
  ASSERT_NE(got[0].seq, 0u);
  EXPECT_TRUE(raw.Answer(got[0], "-NAK"));
  EXPECT_TRUE(raw.Answer(got[0], "+ACK"));
  EXPECT_TRUE(raw.Fetch(w, 1, 2 * kAckWaitMs).empty());
  EXPECT_EQ(raw.AckPending(), 0);
}

// late_ack_by_previous_holder: worker 0's ack, after the message was redelivered to worker 1,
// settles it: worker 1's deadline passes and it never comes back.
TEST_F(JetStreamRawProbe, LateAckByPreviousHolder) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kLateAckByPreviousHolder));
  Raw raw(server_->url(), Name());
  const int w0 = raw.Worker();
  const int w1 = raw.Worker();
  raw.Publish("a");
  const std::vector<Got> first = raw.Fetch(w0, 1);
  ASSERT_EQ(first.size(), 1u);
  const std::vector<Got> second = raw.Fetch(w1, 1, 20 * kAckWaitMs);  // its redelivery
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].delivered, 2u);
  EXPECT_TRUE(raw.Answer(first[0], "+ACK"));
  EXPECT_EQ(raw.AckPending(), 0);
  EXPECT_TRUE(raw.Fetch(w1, 1, 3 * kAckWaitMs).empty());
}

// acks_always_confirmed: the server answers every ack-protocol word sent through a message's
// reply subject, whether it settled anything: a second ack, and a nack after the ack.
TEST_F(JetStreamRawProbe, AcksAlwaysConfirmed) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kAcksAlwaysConfirmed));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const std::vector<Got> got = {raw.PublishAndFetch(w)};
  ASSERT_NE(got[0].seq, 0u);
  EXPECT_TRUE(raw.Answer(got[0], "+ACK"));
  EXPECT_TRUE(raw.Answer(got[0], "+ACK"));
  EXPECT_TRUE(raw.Answer(got[0], "-NAK"));
  EXPECT_TRUE(raw.Fetch(w, 1, 2 * kAckWaitMs).empty());  // the nack gave nothing back
}

// answers_name_no_reason: the server's reply to an ack that settles a message and to one
// that settles nothing (the message is settled already; a nack of it after) is the same:
// it says no reason.
TEST_F(JetStreamRawProbe, AnswersNameNoReason) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kAnswersNameNoReason));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const Got got = raw.PublishAndFetch(w);
  ASSERT_NE(got.seq, 0u);
  const std::string settles = raw.AnswerReply(got, "+ACK");
  EXPECT_EQ(raw.AckPending(), 0);
  EXPECT_EQ(raw.AnswerReply(got, "+ACK"), settles);
  EXPECT_EQ(raw.AnswerReply(got, "-NAK"), settles);
  EXPECT_EQ(settles.rfind("status ", 0), std::string::npos) << settles;
}

// retention_terminates_held: with MaxMsgs 1 (DiscardOld), a held message the next publish
// discards is terminated by the server at once (its advisory), is never redelivered, and
// its holder's ack is answered but changes nothing. The advisory's delivery count is the
// message's redeliveries, not its deliveries: 1 for a message delivered twice.
TEST_F(JetStreamRawProbe, RetentionTerminatesHeld) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kRetentionTerminatesHeld));
  Raw raw(server_->url(), Name(), /*max_msgs=*/1);
  const int w = raw.Worker();
  raw.Publish("a");
  ASSERT_EQ(raw.Fetch(w, 1).size(), 1u);
  const std::vector<Got> got = raw.Fetch(w, 1, 20 * kAckWaitMs);  // its redelivery
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].delivered, 2u);
  raw.Publish("b");  // discards a, held
  const std::vector<std::string> advisories = raw.Advisories(20 * kAckWaitMs);
  ASSERT_EQ(advisories.size(), 1u);
  EXPECT_NE(advisories[0].find("MSG_TERMINATED"), std::string::npos) << advisories[0];
  EXPECT_NE(advisories[0].find("\"stream_seq\":1,"), std::string::npos) << advisories[0];
  EXPECT_NE(advisories[0].find("\"deliveries\":1"), std::string::npos) << advisories[0];
  EXPECT_EQ(raw.AckPending(), 0);
  EXPECT_TRUE(raw.Answer(got[0], "+ACK"));
  sleep_ms(3 * kAckWaitMs);
  EXPECT_EQ(seqs(raw.Fetch(w, 2, kAckWaitMs)), std::vector<std::uint64_t>{2});
}

// R22 on JetStream, as the model has it (no switch): with MaxAckPending 2, a nacked message
// waiting for redelivery still counts, so with one held and one returned no new message is
// handed out, but the returned one is; once one is acked the next new one comes.
TEST_F(JetStreamRawProbe, MaxAckPendingHoldsBackNewMessagesNotRedeliveries) {
  Raw raw(server_->url(), Name(), -1, -1, /*max_ack_pending=*/2);
  const int w = raw.Worker();
  for (const char* p : {"a", "b", "c"}) raw.Publish(p);
  const std::vector<Got> got = raw.Fetch(w, 3);
  ASSERT_EQ(seqs(got), (std::vector<std::uint64_t>{1, 2}));  // c waits
  EXPECT_TRUE(raw.Answer(got[0], "-NAK"));
  const std::vector<Got> again = raw.Fetch(w, 3);
  ASSERT_EQ(seqs(again), std::vector<std::uint64_t>{1});  // the redelivery, not c
  EXPECT_EQ(again[0].delivered, 2u);
  EXPECT_TRUE(raw.Answer(again[0], "+ACK"));
  EXPECT_EQ(seqs(raw.Fetch(w, 3)), std::vector<std::uint64_t>{3});
}

// term_always_announced: a term of a message already acked is announced as terminated, and
// a second term announces it again.
TEST_F(JetStreamRawProbe, TermAlwaysAnnounced) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kTermAlwaysAnnounced));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const std::vector<Got> got = {raw.PublishAndFetch(w)};
  ASSERT_NE(got[0].seq, 0u);
  EXPECT_TRUE(raw.Answer(got[0], "+ACK"));
  EXPECT_TRUE(raw.Answer(got[0], "+TERM"));
  EXPECT_TRUE(raw.Answer(got[0], "+TERM"));
  std::vector<std::string> terminated;
  for (int i = 0; i < 100 && terminated.size() < 2; ++i) {
    for (const std::string& a : raw.Advisories(kAckWaitMs)) {
      if (a.find("MSG_TERMINATED") != std::string::npos) terminated.push_back(a);
    }
  }
  EXPECT_EQ(terminated.size(), 2u);
  EXPECT_TRUE(raw.Fetch(w, 1, 2 * kAckWaitMs).empty());
}

// redelivery_in_return_order: nacked messages come back in the order they were nacked.
TEST_F(JetStreamRawProbe, RedeliveryInReturnOrder) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kRedeliveryInReturnOrder));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  for (const char* p : {"a", "b", "c"}) raw.Publish(p);
  const std::vector<Got> got = raw.Fetch(w, 3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(raw.Answer(got[2], "-NAK"));
  EXPECT_TRUE(raw.Answer(got[0], "-NAK"));
  EXPECT_EQ(seqs(raw.Fetch(w, 3)), (std::vector<std::uint64_t>{3, 1}));
}

// engine_expires: a pull request made before the deadline, with nothing else sent, gets the
// redelivery when AckWait has passed: the server's clock gave it back.
TEST_F(JetStreamRawProbe, EngineExpires) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kEngineExpires));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  raw.Publish("a");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(raw.Fetch(w, 1).size(), 1u);
  const std::vector<Got> again = raw.Fetch(w, 1, 20 * kAckWaitMs);
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].delivered, 2u);
  EXPECT_GE(waited, std::chrono::milliseconds(kAckWaitMs));
}

// dead_letter_when_offered_again and dead_letter_reason_unknown: with MaxDeliver 1 the
// MAX_DELIVERIES advisory does not come when the deadline passes, only with the next fetch
// that would have offered the message; it names the sequence and deliveries, not a reason.
TEST_F(JetStreamRawProbe, DeadLetterWhenOfferedAgainWithNoReason) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kDeadLetterWhenOfferedAgain));
  ASSERT_TRUE(jetstream_profile().has(Switch::kDeadLetterReasonUnknown));
  Raw raw(server_->url(), Name(), -1, /*max_deliver=*/1);
  const int w = raw.Worker();
  raw.Publish("a");
  ASSERT_EQ(raw.Fetch(w, 1).size(), 1u);
  for (const std::string& a : raw.Advisories(4 * kAckWaitMs)) {
    EXPECT_EQ(a.find("MAX_DELIVERIES"), std::string::npos) << "before any fetch: " << a;
  }
  // The advisory comes when a pull request is there to be offered the message: on a busy
  // machine (a sanitizer build) a short request may end before the server looks, so the
  // fetch is made again, a bounded number of times, until the advisory is seen. None of
  // them is handed the dead message.
  std::string dead;
  for (int round = 0; round < 10 && dead.empty(); ++round) {
    EXPECT_TRUE(raw.Fetch(w, 1, kAckWaitMs).empty()) << "round " << round;
    for (const std::string& a : raw.Advisories(4 * kAckWaitMs)) {
      if (a.find("MAX_DELIVERIES") != std::string::npos) dead = a;
    }
  }
  ASSERT_FALSE(dead.empty()) << "no advisory after ten fetches";
  EXPECT_NE(dead.find("\"stream_seq\":1"), std::string::npos) << dead;
  EXPECT_NE(dead.find("\"deliveries\":1"), std::string::npos) << dead;
  EXPECT_EQ(dead.find("reason"), std::string::npos) << dead;
}

// The scope of dead_letter_when_offered_again: a push consumer (R8: MaxAckPending 1, as the
// adapter makes it) pushes the next offer at once, so a nack of the last allowed delivery is
// announced as MAX_DELIVERIES right away, no poll asked, and the next message follows: on push
// the message dies at its failure, as the model has it without the switch.
TEST_F(JetStreamRawProbe, APushConsumerAnnouncesMaxDeliveriesAtTheLastFailure) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kDeadLetterWhenOfferedAgain));
  const std::string name = Name();
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  Check(natsConnection_ConnectTo(&nc, server_->url().c_str()), "connect");
  Check(natsConnection_JetStream(&js, nc, nullptr), "jetstream");
  const std::string subject = name + ".s";
  const std::string deliver = "probe.push." + name;
  AddStream(js, name);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsSubscription* pushed = nullptr;
  natsSubscription* advisories = nullptr;
  Check(natsConnection_SubscribeSync(&pushed, nc, deliver.c_str()), "subscribe deliver subject");
  const std::string advisory = "$JS.EVENT.ADVISORY.CONSUMER.*." + name + ".d";
  Check(natsConnection_SubscribeSync(&advisories, nc, advisory.c_str()), "advisories");
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = "d";
  cc.DeliverSubject = deliver.c_str();
  cc.AckPolicy = js_AckExplicit;
  cc.AckWait = 3600LL * 1000 * kNs;
  cc.MaxDeliver = 2;
  cc.MaxAckPending = 1;
  Check(js_AddConsumer(nullptr, js, name.c_str(), &cc, nullptr, &jerr), "add consumer");
  for (const char* payload : {"a", "b"}) {
    Check(js_Publish(nullptr, js, subject.c_str(), payload, 1, nullptr, &jerr), "publish");
  }
  // Each delivery as (stream sequence, delivery count), then a nack through it.
  auto next = [&](const char* word) {
    natsMsg* m = nullptr;
    if (natsSubscription_NextMsg(&m, pushed, 5000) != NATS_OK) return std::string("none");
    jsMsgMetaData* meta = nullptr;
    Check(natsMsg_GetMetaData(&meta, m), "metadata");
    const std::string got =
        std::to_string(meta->Sequence.Stream) + "/" + std::to_string(meta->NumDelivered);
    jsMsgMetaData_Destroy(meta);
    natsMsg* reply = nullptr;
    EXPECT_EQ(natsConnection_RequestString(&reply, nc, natsMsg_GetReply(m), word, 2000), NATS_OK);
    natsMsg_Destroy(reply);
    natsMsg_Destroy(m);
    return got;
  };
  EXPECT_EQ(next("-NAK"), "1/1");
  EXPECT_EQ(next("-NAK"), "1/2");  // offered again at once, before b
  std::string dead;
  for (int i = 0; i < 100 && dead.empty(); ++i) {
    natsMsg* m = nullptr;
    if (natsSubscription_NextMsg(&m, advisories, 5000) != NATS_OK) break;
    const std::string text = natsMsg_GetSubject(m);
    if (text.find("MAX_DELIVERIES") != std::string::npos) {
      dead = std::string(natsMsg_GetData(m), natsMsg_GetDataLength(m));
    }
    natsMsg_Destroy(m);
  }
  EXPECT_NE(dead.find("\"stream_seq\":1"), std::string::npos) << "no MAX_DELIVERIES: " << dead;
  EXPECT_NE(dead.find("\"deliveries\":2"), std::string::npos) << dead;
  EXPECT_EQ(next("+ACK"), "2/1");  // b follows; a is never pushed again
  natsSubscription_Destroy(advisories);
  natsSubscription_Destroy(pushed);
  js_DeleteStream(js, name.c_str(), nullptr, nullptr);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
}

// A "-NAK" with a delay, as a probe sends it (the delay in ns, JSON).
std::string nak_with_delay(std::int64_t ms) {
  return "-NAK {\"delay\": " + std::to_string(ms * kNs) + "}";
}

// R24 on JetStream, as the model has it (no switch): a nack with a delay gives the message
// back only once the delay has passed, attempt 2.
TEST_F(JetStreamRawProbe, DelayedNackWaitsItsDelay) {
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const Got held = raw.PublishAndFetch(w);
  ASSERT_NE(held.seq, 0u);
  EXPECT_TRUE(raw.Answer(held, nak_with_delay(4 * kAckWaitMs).c_str()));
  EXPECT_TRUE(raw.Fetch(w, 1, kAckWaitMs).empty());  // well inside the delay
  const std::vector<Got> again = raw.Fetch(w, 1, 20 * kAckWaitMs);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].seq, held.seq);
  EXPECT_EQ(again[0].delivered, 2u);
}

// retry_wait_holds_a_place: with MaxAckPending 1, a message waiting for its delayed retry
// still holds the one place: a new message is not handed out while it waits, and the
// waiting one is once its delay is over.
TEST_F(JetStreamRawProbe, RetryWaitHoldsAPlace) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kRetryWaitHoldsAPlace));
  Raw raw(server_->url(), Name(), -1, -1, /*max_ack_pending=*/1);
  const int w = raw.Worker();
  const Got held = raw.PublishAndFetch(w);
  ASSERT_NE(held.seq, 0u);
  EXPECT_TRUE(raw.Answer(held, nak_with_delay(4 * kAckWaitMs).c_str()));
  raw.Publish("b");
  EXPECT_TRUE(raw.Fetch(w, 1, kAckWaitMs).empty());  // b waits behind the waiting one
  EXPECT_EQ(raw.AckPending(), 1);
  const std::vector<Got> again = raw.Fetch(w, 1, 20 * kAckWaitMs);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].seq, held.seq);
}

// answers_reset_a_retry_wait: a plain nack through the same delivery of a message waiting
// for its delayed retry makes it ready at once; an in-progress ack makes it wait AckWait
// from then instead of the (longer) delay.
TEST_F(JetStreamRawProbe, AnswersResetARetryWait) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kAnswersResetARetryWait));
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const Got first = raw.PublishAndFetch(w);
  ASSERT_NE(first.seq, 0u);
  EXPECT_TRUE(raw.Answer(first, nak_with_delay(100 * kAckWaitMs).c_str()));
  EXPECT_TRUE(raw.Answer(first, "-NAK"));
  const std::vector<Got> at_once = raw.Fetch(w, 1, kAckWaitMs / 2);
  ASSERT_EQ(at_once.size(), 1u);
  EXPECT_EQ(at_once[0].seq, first.seq);
  EXPECT_TRUE(raw.Answer(at_once[0], nak_with_delay(100 * kAckWaitMs).c_str()));
  EXPECT_TRUE(raw.Answer(at_once[0], "+WPI"));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Got> after_ack_wait = raw.Fetch(w, 1, 40 * kAckWaitMs);
  ASSERT_EQ(after_ack_wait.size(), 1u);  // within 40 AckWaits, not the delay's 100
  EXPECT_EQ(after_ack_wait[0].seq, first.seq);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(kAckWaitMs / 2));
}

// lag_age_unknown: consumer info counts what waits to be delivered (num_pending) and what is
// held or returned (num_ack_pending), and a message that died of max deliveries in neither;
// it reports no age, and its ack floor stays below the dead message until a later ack moves
// it, so neither says which message is the oldest one not yet confirmed.
TEST_F(JetStreamRawProbe, LagAgeUnknown) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kLagAgeUnknown));
  Raw raw(server_->url(), Name(), -1, /*max_deliver=*/1);
  const int w = raw.Worker();
  const Got a = raw.PublishAndFetch(w);  // seq 1, its one delivery
  ASSERT_NE(a.seq, 0u);
  raw.Publish("b");
  raw.Publish("c");
  Raw::Counts c = raw.Info();
  EXPECT_EQ(c.pending, 2u);     // b, c
  EXPECT_EQ(c.ack_pending, 1);  // a, held
  EXPECT_TRUE(raw.Answer(a, "-NAK"));
  c = raw.Info();
  EXPECT_EQ(c.pending, 2u);
  EXPECT_EQ(c.ack_pending, 1);                                     // a, returned: still counted
  const std::vector<Got> next = raw.Fetch(w, 1, 20 * kAckWaitMs);  // a dies; b comes
  ASSERT_EQ(seqs(next), std::vector<std::uint64_t>{2});
  c = raw.Info();
  EXPECT_EQ(c.pending, 1u);     // c
  EXPECT_EQ(c.ack_pending, 1);  // b; a, dead, in neither
  EXPECT_LT(c.floor, a.seq);    // below the dead message: the floor is no oldest one either
  EXPECT_TRUE(raw.Answer(next[0], "+ACK"));
  c = raw.Info();
  EXPECT_EQ(c.ack_pending, 0);
  EXPECT_EQ(c.floor, next[0].seq);  // an ack above it moves it past the dead one
}

// Not the server's, but the engine's own client: libnats writes a consumer's start time with
// the fraction of a second printed without its leading zeros, so 50 ms past a second goes to
// the server as ".5" and comes back 500 ms; why the JetStream target sends a seek by time's
// consumer request itself. A fraction of nine digits is written as it is.
TEST_F(JetStreamRawProbe, LibnatsWritesAStartTimeUnderATenthOfASecondWrong) {
  Raw raw(server_->url(), Name());
  const std::int64_t second = 1700000000LL * 1000000000LL;
  const std::int64_t asked = second + 50 * kNs;   // .050000000
  const std::int64_t plain = second + 500 * kNs;  // .500000000
  EXPECT_EQ(raw.StartTimeAsStored("early", asked), plain);
  EXPECT_EQ(raw.StartTimeAsStored("late", second + 123456789), second + 123456789);
}

// Not a switch, but why the JetStream target waits for the server to end every pull
// request: a message nacked while a pull request is open goes to that request at once and
// counts as a delivery, whether or not the request's client still reads its inbox. A
// client that gave up on the request holds the message unseen until AckWait passes.
TEST_F(JetStreamRawProbe, AnOpenPullRequestTakesANackedMessageAsADelivery) {
  Raw raw(server_->url(), Name());
  const int w = raw.Worker();
  const Got held = raw.PublishAndFetch(w);
  ASSERT_NE(held.seq, 0u);
  natsSubscription* inbox = raw.OpenRequest(40 * kAckWaitMs);
  for (int i = 0; i < 1000 && raw.Waiting() < 1; ++i) sleep_ms(5);
  ASSERT_EQ(raw.Waiting(), 1);
  EXPECT_TRUE(raw.Answer(held, "-NAK"));
  natsMsg* m = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&m, inbox, 20 * kAckWaitMs), NATS_OK);
  jsMsgMetaData* meta = nullptr;
  ASSERT_EQ(natsMsg_GetMetaData(&meta, m), NATS_OK);
  EXPECT_EQ(meta->Sequence.Stream, held.seq);
  EXPECT_EQ(meta->NumDelivered, 2u);
  jsMsgMetaData_Destroy(meta);
  natsMsg_Destroy(m);
  EXPECT_EQ(raw.AckPending(), 1);  // the request's client holds it
}

// concurrent_polls_interleave: two pull requests of 2 waiting at once share the next four
// messages one by one, so neither batch is two consecutive messages.
TEST_F(JetStreamRawProbe, ConcurrentPollsInterleave) {
  ASSERT_TRUE(jetstream_profile().has(Switch::kConcurrentPollsInterleave));
  Raw raw(server_->url(), Name());
  Raw* r = &raw;
  const int w0 = raw.Worker();
  const int w1 = raw.Worker();
  std::vector<Got> a, b;
  std::thread ta([&] { a = r->Fetch(w0, 2, 40 * kAckWaitMs); });
  for (int i = 0; i < 1000 && raw.Waiting() < 1; ++i) sleep_ms(5);
  std::thread tb([&] { b = r->Fetch(w1, 2, 40 * kAckWaitMs); });
  for (int i = 0; i < 1000 && raw.Waiting() < 2; ++i) sleep_ms(5);
  ASSERT_EQ(raw.Waiting(), 2);
  for (const char* p : {"a", "b", "c", "d"}) raw.Publish(p);
  ta.join();
  tb.join();
  EXPECT_EQ(seqs(a), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(seqs(b), (std::vector<std::uint64_t>{2, 4}));
}

// A connection that does not reconnect, with a durable pull consumer "d" (AckWait
// kAckWaitMs) on stream `name`, file storage: enough to fetch across a kill -9.
class Unreconnecting {
 public:
  Unreconnecting(const std::string& url, const std::string& name) : subject_(name + ".s") {
    natsOptions* opts = nullptr;
    Check(natsOptions_Create(&opts), "options");
    natsOptions_SetURL(opts, url.c_str());
    natsOptions_SetAllowReconnect(opts, false);
    const natsStatus s = natsConnection_Connect(&nc_, opts);
    natsOptions_Destroy(opts);
    Check(s, "connect");
    Check(natsConnection_JetStream(&js_, nc_, nullptr), "jetstream");
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = name.c_str();
    so.Consumer = "d";
    jsErrCode jerr = static_cast<jsErrCode>(0);
    if (js_PullSubscribe(&pull_, js_, subject_.c_str(), "d", nullptr, &so, &jerr) == NATS_OK) {
      return;  // the stream and consumer are there (a restart)
    }
    AddStreamAndConsumer(js_, name);
    Check(js_PullSubscribe(&pull_, js_, subject_.c_str(), "d", nullptr, &so, &jerr), "pull");
  }
  ~Unreconnecting() {
    natsSubscription_Destroy(pull_);
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  Unreconnecting(const Unreconnecting&) = delete;
  Unreconnecting& operator=(const Unreconnecting&) = delete;

  void Publish(const std::string& payload) {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    Check(js_Publish(nullptr, js_, subject_.c_str(), payload.data(),
                     static_cast<int>(payload.size()), nullptr, &jerr),
          "publish");
  }
  /// The next message's (stream sequence, delivery count), waiting up to wait_ms; {0, 0} if
  /// none came.
  std::pair<std::uint64_t, std::uint64_t> FetchOne(std::int64_t wait_ms) {
    natsMsgList list{nullptr, 0};
    if (natsSubscription_Fetch(&list, pull_, 1, wait_ms, nullptr) != NATS_OK || list.Count != 1) {
      natsMsgList_Destroy(&list);
      return {0, 0};
    }
    jsMsgMetaData* meta = nullptr;
    Check(natsMsg_GetMetaData(&meta, list.Msgs[0]), "metadata");
    const std::pair<std::uint64_t, std::uint64_t> got{meta->Sequence.Stream, meta->NumDelivered};
    jsMsgMetaData_Destroy(meta);
    natsMsgList_Destroy(&list);
    return got;
  }

 private:
  std::string subject_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  natsSubscription* pull_ = nullptr;
};

// What the fault runs show as attempts-went-back (SPEC R34, CONFORMANCE.md "Faults"):
// nats-server 2.9.10 writes a consumer's state, delivery counts among it, after the fact, at
// most once every 100 ms (consumerFileStore.flushLoop). A delivery made less than 100 ms after
// the last write is lost with a kill -9 that comes before the next: the message is handed out
// again at the count it had, so one that kills its consumer at once can outlive MaxDeliver.
// Here "b" is fetched right after "a" (whose delivery wrote the state), then the server is
// killed. Each round is a new stream; a round in which the write won is counted, not failed.
TEST(JetStreamKill9, ADeliveryJustBeforeAKillIsHandedOutAgainAtTheSameCount) {
  NatsServer server;
  int rounds = 0, lost = 0;
  for (; rounds < 5 && lost == 0; ++rounds) {
    const std::string name = "kill" + std::to_string(rounds);
    {
      Unreconnecting c(server.url(), name);
      c.Publish("a");
      c.Publish("b");
      ASSERT_EQ(c.FetchOne(1000), (std::pair<std::uint64_t, std::uint64_t>{1, 1}));
      ASSERT_EQ(c.FetchOne(1000), (std::pair<std::uint64_t, std::uint64_t>{2, 1}));
      server.kill9();
    }
    server.restart();
    Unreconnecting c(server.url(), name);
    // Kept, "b" comes back only after its AckWait, at count 2; lost, at once at count 1.
    for (int i = 0; i < 2; ++i) {
      const std::pair<std::uint64_t, std::uint64_t> got = c.FetchOne(4 * kAckWaitMs);
      if (got.first == 2 && got.second == 1) ++lost;
    }
  }
  EXPECT_GT(lost, 0) << "every delivery count survived the kill in " << rounds << " rounds";
}

}  // namespace
}  // namespace conformance
