// Parsing the text form (see oplang/text.h). Every malformed input ends in a ParseError.
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "oplang/text.h"

namespace oplang {

ParseError::ParseError(std::size_t line, std::size_t column, const std::string& expected)
    : std::runtime_error(std::to_string(line) + ":" + std::to_string(column) + ": expected " +
                         expected),
      line_(line),
      column_(column),
      expected_(expected) {}

namespace {

struct Token {
  enum class Kind { kWord, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // word / decoded string / the punctuation character
  std::size_t column = 0;
};

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits one line into tokens; a '#' outside a string ends the line.
std::vector<Token> tokenize(std::string_view line, std::size_t line_no) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    const std::size_t col = i + 1;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '#') {
      break;
    } else if (is_word_char(c)) {
      std::size_t j = i;
      while (j < line.size() && is_word_char(line[j])) ++j;
      out.push_back({Token::Kind::kWord, std::string(line.substr(i, j - i)), col});
      i = j;
    } else if (c == '"') {
      std::string text;
      std::size_t j = i + 1;
      while (true) {
        if (j >= line.size()) throw ParseError(line_no, j + 1, "closing quote");
        const char d = line[j];
        if (d == '"') break;
        if (d != '\\') {
          text += d;
          ++j;
          continue;
        }
        if (j + 1 >= line.size()) throw ParseError(line_no, j + 2, "escape character");
        const char e = line[j + 1];
        if (e == '"' || e == '\\') {
          text += e;
        } else if (e == 'n') {
          text += '\n';
        } else if (e == 't') {
          text += '\t';
        } else if (e == 'r') {
          text += '\r';
        } else if (e == 'x') {
          const int hi = j + 2 < line.size() ? hex_digit(line[j + 2]) : -1;
          const int lo = j + 3 < line.size() ? hex_digit(line[j + 3]) : -1;
          if (hi < 0 || lo < 0) throw ParseError(line_no, j + 3, "two hex digits after \\x");
          text += static_cast<char>(hi * 16 + lo);
          j += 2;
        } else {
          throw ParseError(line_no, j + 2, "escape \\\" \\\\ \\n \\t \\r or \\xHH");
        }
        j += 2;
      }
      out.push_back({Token::Kind::kString, std::move(text), col});
      i = j + 1;
    } else if (std::string_view("=[],():+").find(c) != std::string_view::npos) {
      out.push_back({Token::Kind::kPunct, std::string(1, c), col});
      ++i;
    } else {
      throw ParseError(line_no, col, "a word, a quoted string or one of = [ ] , ( ) : +");
    }
  }
  out.push_back({Token::Kind::kEnd, "", line.size() + 1});
  return out;
}

// A recursive-descent reader over one line's tokens.
class LineParser {
 public:
  // in_program: the line belongs to a concurrent program (ack/nack/extend may say `oldest`
  // or `all`).
  LineParser(std::vector<Token> tokens, std::size_t line, bool in_program = false)
      : tokens_(std::move(tokens)), line_(line), in_program_(in_program) {}

  // `broker sync|lane|pool [threads=N] [timeout=MS] [backoff=MS] [shutdown] [clock=manual]
  // [auto_expire=MS] [durable ...]`, the word `broker` read.
  BrokerSpec broker_line() {
    using D = BrokerSpec::Dispatcher;
    BrokerSpec b;
    if (peek().kind != Token::Kind::kWord) fail("a dispatcher: sync, lane or pool");
    const std::string kind = peek().text;
    if (kind == "sync") {
      b.dispatcher = D::kSynchronous;
    } else if (kind == "lane") {
      b.dispatcher = D::kLane;
    } else if (kind == "pool") {
      b.dispatcher = D::kPool;
    } else {
      fail("a dispatcher: sync, lane or pool");
    }
    next();
    const char* expected =
        b.dispatcher == D::kPool ? "threads=, timeout=, backoff=, shutdown, auto_expire= or durable"
        : b.dispatcher == D::kLane
            ? "backoff=, shutdown, clock=, auto_expire= or durable (threads= and timeout= are "
              "pool's)"
            : "clock=, auto_expire=, durable or end of line";
    while (peek().kind != Token::Kind::kEnd) {
      if (peek().kind != Token::Kind::kWord) fail(expected);
      const std::string key = peek().text;
      if (key == "durable" && !b.durable) {
        next();
        b.durable = true;
        durable_options(b);
        if (peek().kind != Token::Kind::kEnd) fail("publish_sync=, commit_sync= or end of line");
        break;
      }
      if (key == "shutdown" && b.dispatcher != D::kSynchronous && !b.shutdown) {
        next();
        b.shutdown = true;
        continue;
      }
      if (key == "clock" && !b.manual_clock) {
        next();
        expect_punct('=');
        if (value("manual") != "manual") {
          --pos_;
          fail("manual");
        }
        b.manual_clock = true;
        continue;
      }
      if (key == "auto_expire" && b.auto_expire == 0) {
        next();
        expect_punct('=');
        b.auto_expire = signed_number("an expiry period in ms >= 1", 1, 1000000);
        continue;
      }
      const bool pool_only = key == "threads" || key == "timeout";
      if (!(key == "backoff" || pool_only) || b.dispatcher == D::kSynchronous ||
          (pool_only && b.dispatcher != D::kPool)) {
        fail(expected);
      }
      next();
      expect_punct('=');
      if (key == "threads") {
        b.threads = static_cast<std::size_t>(
            signed_number("a thread count >= 1", 1, std::numeric_limits<std::int32_t>::max()));
      } else if (key == "timeout") {
        b.timeout =
            signed_number("a handler timeout in ms >= 0", 0, std::numeric_limits<Millis>::max());
      } else {
        b.backoff = signed_number("a back-off in ms >= 0", 0, std::numeric_limits<Millis>::max());
      }
    }
    return b;
  }

  // `[publish_sync=P] [commit_sync=P]` after `durable`, P: always, none or every(MS).
  void durable_options(BrokerSpec& b) {
    while (peek().kind == Token::Kind::kWord &&
           (peek().text == "publish_sync" || peek().text == "commit_sync")) {
      SyncPolicy& p = next().text == "publish_sync" ? b.publish_sync : b.commit_sync;
      expect_punct('=');
      const std::string kind = value("always, none or every(MS)");
      if (kind == "always") {
        p = SyncPolicy{};
      } else if (kind == "none") {
        p = SyncPolicy{SyncPolicy::Kind::kNone, 0};
      } else if (kind == "every") {
        expect_punct('(');
        p = SyncPolicy{SyncPolicy::Kind::kEvery,
                       signed_number("an interval in ms >= 1", 1, 1000000)};
        expect_punct(')');
      } else {
        --pos_;
        fail("always, none or every(MS)");
      }
    }
  }

  // `fiber NAME`, the word `fiber` read.
  std::string fiber_line() {
    std::string name = value("a fiber name");
    if (peek().kind != Token::Kind::kEnd) fail("end of line");
    return name;
  }

  // Skips the line's first word (broker, fiber: the caller checked it).
  void op_name() { next(); }

  Op op() {
    const Token& verb = peek();
    if (verb.kind != Token::Kind::kWord) fail("an operation name");
    const std::string name = next().text;
    Op result = dispatch(name, verb);
    if (peek().kind != Token::Kind::kEnd) fail("end of line");
    return result;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (t.kind != Token::Kind::kEnd) ++pos_;
    return t;
  }
  [[noreturn]] void fail(const std::string& expected) const {
    throw ParseError(line_, peek().column, expected);
  }
  bool at_punct(char c) const { return peek().kind == Token::Kind::kPunct && peek().text[0] == c; }
  void expect_punct(char c) {
    if (!at_punct(c)) fail(std::string("'") + c + "'");
    next();
  }
  std::string value(const char* what) {
    if (peek().kind != Token::Kind::kWord && peek().kind != Token::Kind::kString) fail(what);
    return next().text;
  }
  std::uint64_t unsigned_number(const char* what) {
    if (peek().kind != Token::Kind::kWord) fail(what);
    const std::string& t = peek().text;
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size()) fail(what);
    next();
    return v;
  }
  std::int64_t signed_number(const char* what, std::int64_t lo, std::int64_t hi) {
    if (peek().kind != Token::Kind::kWord) fail(what);
    const std::string& t = peek().text;
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || v < lo || v > hi) fail(what);
    next();
    return v;
  }
  int max_deliveries() {
    return static_cast<int>(signed_number("a number of deliveries", std::numeric_limits<int>::min(),
                                          std::numeric_limits<int>::max()));
  }
  Millis millis(const char* what) {
    return signed_number(what, std::numeric_limits<Millis>::min(),
                         std::numeric_limits<Millis>::max());
  }
  // An option key followed by '=' (returns it) or nullopt at end of line.
  std::optional<std::string> option_key(const char* expected) {
    if (peek().kind == Token::Kind::kEnd) return std::nullopt;
    if (peek().kind != Token::Kind::kWord) fail(expected);
    std::string key = next().text;
    expect_punct('=');
    return key;
  }
  Headers filter() {
    Headers h;
    expect_punct('[');
    while (!at_punct(']')) {
      if (!h.empty()) expect_punct(',');
      std::string name = value("a header name");
      expect_punct('=');
      h[name] = value("a header value");
    }
    next();
    return h;
  }
  Start start() {
    if (peek().kind == Token::Kind::kWord && peek().text == "end") return next(), Start{};
    if (peek().kind == Token::Kind::kWord && peek().text == "begin") {
      next();
      return Start{Start::Kind::kBeginning, 0};
    }
    return Start{Start::Kind::kOffset, unsigned_number("end, begin or an offset")};
  }
  std::optional<model::Verdict> verdict_word(const std::string& w) {
    if (w == "confirm") return model::Verdict::kConfirm;
    if (w == "reject") return model::Verdict::kReject;
    if (w == "throw") return model::Verdict::kThrowStd;
    if (w == "throw42") return model::Verdict::kThrowOther;
    if (w == "term") return model::Verdict::kTerminate;
    return std::nullopt;
  }
  model::Step step() {
    using model::EffectKind;
    const char* expected =
        "a step: confirm, reject, throw, throw42, unsubscribe, publish(...), seek(...), drain or "
        "stall(...)";
    if (peek().kind != Token::Kind::kWord) fail(expected);
    model::Step s;
    if (auto v = verdict_word(peek().text)) {
      next();
      s.verdict = *v;
      return s;
    }
    const std::string w = peek().text;
    if (w == "unsubscribe") {
      next();
      s.effect = EffectKind::kUnsubscribeSelf;
      if (at_punct('(')) {
        next();
        s.effect = EffectKind::kUnsubscribe;
        s.topic = value("a topic");
        expect_punct(',');
        s.name = value("a subscription name");
        expect_punct(')');
      }
    } else if (w == "publish") {
      next();
      s.effect = EffectKind::kPublish;
      expect_punct('(');
      s.topic = value("a topic");
      expect_punct(',');
      s.payload = value("a payload");
      expect_punct(')');
    } else if (w == "seek") {
      next();
      s.effect = EffectKind::kSeek;
      expect_punct('(');
      s.topic = value("a topic");
      expect_punct(',');
      s.name = value("a subscription name");
      expect_punct(',');
      s.offset = unsigned_number("an offset");
      expect_punct(')');
    } else if (w == "drain") {
      next();
      s.effect = EffectKind::kDrain;
    } else if (w == "stall") {
      next();
      s.effect = EffectKind::kStall;
      expect_punct('(');
      s.ms = signed_number("a stall in ms >= 0", 0, std::numeric_limits<std::int64_t>::max());
      expect_punct(')');
    } else {
      fail(expected);
    }
    if (at_punct('+')) {
      next();
      if (peek().kind != Token::Kind::kWord)
        fail("a verdict: confirm, reject, throw, throw42 or term");
      auto v = verdict_word(peek().text);
      if (!v) fail("a verdict: confirm, reject, throw, throw42 or term");
      next();
      s.verdict = *v;
    }
    return s;
  }
  model::Script script() {
    model::Script out;
    expect_punct('[');
    while (!at_punct(']')) {
      if (!out.empty()) expect_punct(',');
      out.push_back(step());
    }
    next();
    return out;
  }

  Op create_topic() {
    CreateTopic o{value("a topic name")};
    const char* expected = "messages=, bytes=, partitions= or partitioner=";
    while (auto key = option_key(expected)) {
      if (*key == "messages") {
        o.retention_messages = unsigned_number("a message count");
      } else if (*key == "bytes") {
        o.retention_bytes = unsigned_number("a byte count");
      } else if (*key == "partitions") {
        o.partitions = partition("a partition count");
      } else if (*key == "partitioner") {
        const Token& t = peek();
        if (t.kind == Token::Kind::kWord && t.text == "murmur2") {
          o.partitioner = model::Partitioner::kMurmur2;
        } else if (t.kind == Token::Kind::kWord && t.text == "java") {
          o.partitioner = model::Partitioner::kJavaHashCode;
        } else {
          fail("murmur2 or java");
        }
        next();
      } else {
        fail(expected);
      }
    }
    return o;
  }
  // A number that fits a partition count or index (R29's bound is checked by the broker).
  std::uint32_t partition(const char* what) {
    const std::size_t n = unsigned_number(what);
    if (n > UINT32_MAX) fail(what);
    return static_cast<std::uint32_t>(n);
  }
  Op publish_to() {
    PublishTo o;
    o.topic = value("a topic");
    o.partition = partition("a partition");
    o.payload = value("a payload");
    headers_and_key(o.headers, o.key);
    return o;
  }
  Op publish() {
    Publish o;
    o.topic = value("a topic");
    o.payload = value("a payload");
    headers_and_key(o.headers, o.key);
    return o;
  }
  void headers_and_key(Headers& headers, std::string& key) {
    while (peek().kind != Token::Kind::kEnd) {
      const Token& name = peek();
      if (name.kind == Token::Kind::kWord && name.text == "key" &&
          tokens_[pos_ + 1].kind == Token::Kind::kPunct && tokens_[pos_ + 1].text == ":") {
        next();
        next();
        key = value("a key");
        continue;
      }
      std::string header = value("a header NAME=VALUE or key:VALUE");
      expect_punct('=');
      headers[header] = value("a header value");
    }
  }
  Op subscribe() {
    Subscribe o;
    o.topic = value("a topic");
    o.name = value("a subscription name");
    const char* expected =
        "filter=, max=, start=, group=, idempotent, durable_attempts, script= or backoff=";
    while (true) {
      if (!o.idempotent && peek().kind == Token::Kind::kWord && peek().text == "idempotent") {
        next();
        o.idempotent = true;
        continue;
      }
      if (!o.durable_attempts && peek().kind == Token::Kind::kWord &&
          peek().text == "durable_attempts") {
        next();
        o.durable_attempts = true;
        continue;
      }
      const std::optional<std::string> key = option_key(expected);
      if (!key) break;
      if (*key == "filter") {
        o.filter = filter();
      } else if (*key == "max") {
        o.max_deliveries = max_deliveries();
      } else if (*key == "start") {
        o.start = start();
      } else if (*key == "group") {
        o.group = value("a group name");
      } else if (*key == "script") {
        o.script = script();
      } else if (*key == "backoff") {
        o.backoff = backoff();
      } else {
        fail(expected);
      }
    }
    return o;
  }
  // R20: resubscribe TOPIC NAME [group=G] [idempotent] [script=...]: the saved options.
  Op resubscribe() {
    Subscribe o;
    o.saved = true;
    o.topic = value("a topic");
    o.name = value("a subscription name");
    const char* expected = "group=, idempotent or script=";
    while (true) {
      if (!o.idempotent && peek().kind == Token::Kind::kWord && peek().text == "idempotent") {
        next();
        o.idempotent = true;
        continue;
      }
      const std::optional<std::string> key = option_key(expected);
      if (!key) break;
      if (*key == "group") {
        o.group = value("a group name");
      } else if (*key == "script") {
        o.script = script();
      } else {
        fail(expected);
      }
    }
    return o;
  }
  // `[MS,MS,...]` after backoff= (R24): at least one wait; no list is written as no option.
  std::vector<Millis> backoff() {
    std::vector<Millis> out;
    expect_punct('[');
    if (at_punct(']')) fail("a wait in ms (for no back-off leave backoff= out)");
    while (!at_punct(']')) {
      if (!out.empty()) expect_punct(',');
      out.push_back(millis("a wait in ms"));
    }
    next();
    return out;
  }
  Op subscribe_pull() {
    SubscribePull o;
    o.topic = value("a topic");
    o.name = value("a subscription name");
    pull_options(o, nullptr);
    return o;
  }
  // The options of subscribe_pull (and join_group, which also takes assignor=).
  template <typename T>
  void pull_options(T& o, model::Assignor* assignor) {
    const char* expected = assignor
                               ? "assignor=, filter=, timeout=, max=, start=, inflight=, "
                                 "backoff=, ordered or durable_attempts"
                               : "filter=, timeout=, max=, start=, inflight=, backoff=, ordered "
                                 "or durable_attempts";
    while (true) {
      if (!o.ordered_by_key && peek().kind == Token::Kind::kWord && peek().text == "ordered") {
        next();
        o.ordered_by_key = true;
        continue;
      }
      if (!o.durable_attempts && peek().kind == Token::Kind::kWord &&
          peek().text == "durable_attempts") {
        next();
        o.durable_attempts = true;
        continue;
      }
      auto key = option_key(expected);
      if (!key) break;
      if (*key == "assignor" && assignor) {
        *assignor = assignor_name();
      } else if (*key == "filter") {
        o.filter = filter();
      } else if (*key == "timeout") {
        o.ack_timeout = millis("an ack timeout in ms");
      } else if (*key == "max") {
        o.max_deliveries = max_deliveries();
      } else if (*key == "start") {
        o.start = start();
      } else if (*key == "inflight") {
        o.max_in_flight = unsigned_number("a number of messages in flight");
      } else if (*key == "backoff") {
        o.backoff = backoff();
      } else {
        fail(expected);
      }
    }
  }
  model::Assignor assignor_name() {
    const char* expected = "range, round_robin, sticky or cooperative";
    const std::string w = value(expected);
    if (w == "range") return model::Assignor::kRange;
    if (w == "round_robin") return model::Assignor::kRoundRobin;
    if (w == "sticky") return model::Assignor::kSticky;
    if (w == "cooperative") return model::Assignor::kCooperativeSticky;
    fail(expected);
  }
  Op join_group() {
    JoinGroup o;
    o.topic = value("a topic");
    o.group = value("a group name");
    o.member = value("a member name");
    pull_options(o, &o.assignor);
    return o;
  }
  Op join_group_push() {
    JoinGroupPush o;
    o.topic = value("a topic");
    o.group = value("a group name");
    o.member = value("a member name");
    const char* expected = "assignor=, filter=, max=, start=, backoff= or script=";
    while (auto key = option_key(expected)) {
      if (*key == "assignor") {
        o.assignor = assignor_name();
      } else if (*key == "filter") {
        o.filter = filter();
      } else if (*key == "max") {
        o.max_deliveries = max_deliveries();
      } else if (*key == "start") {
        o.start = start();
      } else if (*key == "backoff") {
        o.backoff = backoff();
      } else if (*key == "script") {
        o.script = script();
      } else {
        fail(expected);
      }
    }
    return o;
  }
  Op poll_group() {
    PollGroup o;
    o.topic = value("a topic");
    o.group = value("a group name");
    o.member = value("a member name");
    max_option(o.max);
    return o;
  }
  // `[max=N]` of poll and poll_group.
  void max_option(std::size_t& max) {
    while (auto key = option_key("max=")) {
      if (*key != "max") fail("max=");
      max = unsigned_number("a message count");
    }
  }
  // `gen=N` after an ack, nack, term or extend: the receipt's group generation (R32); a
  // nack also takes `delay=MS` (R24).
  template <typename T>
  T with_generation(T o) {
    constexpr bool kNack = std::is_same_v<T, Nack>;
    const char* expected = kNack ? "delay= or gen=" : "gen=";
    while (auto key = option_key(expected)) {
      if (*key == "gen") {
        o.generation = unsigned_number("a generation");
      } else if constexpr (kNack) {
        if (*key != "delay") fail(expected);
        o.delay = millis("a delay in ms");
      } else {
        fail(expected);
      }
    }
    return o;
  }
  Op poll() {
    Poll o;
    o.topic = value("a topic");
    o.sub = value("a subscription name");
    o.member = value("a member name");
    max_option(o.max);
    return o;
  }
  Op poll_wait() {
    PollWait o;
    o.topic = value("a topic");
    o.sub = value("a subscription name");
    o.member = value("a member name");
    while (auto key = option_key("max= or timeout=")) {
      if (*key == "max") {
        o.max = unsigned_number("a message count");
      } else if (*key == "timeout") {
        o.timeout = millis("a timeout in ms");
      } else {
        fail("max= or timeout=");
      }
    }
    return o;
  }
  // `[timeout=MS]` of wait_idle and wait_delivered.
  // `CALL [nth=N] [error=eio|enospc]` of fault (R33).
  Op fault() {
    Fault o;
    const std::string call =
        value("a call: open, append, sync, sync_dir, rename, remove, truncate, extend");
    bool known = false;
    for (IoCall c : {IoCall::kOpen, IoCall::kAppend, IoCall::kSync, IoCall::kSyncDir,
                     IoCall::kRename, IoCall::kRemove, IoCall::kTruncate, IoCall::kExtend}) {
      if (call == name_of(c)) o.call = c, known = true;
    }
    if (!known) {
      --pos_;
      fail("a call: open, append, sync, sync_dir, rename, remove, truncate, extend");
    }
    while (auto key = option_key("nth= or error=")) {
      if (*key == "nth") {
        const std::uint64_t nth = unsigned_number("a count from 1");
        if (nth == 0 || nth > 1000) fail("a count from 1 to 1000");
        o.nth = static_cast<std::uint32_t>(nth);
      } else if (*key == "error") {
        const std::string e = value("eio or enospc");
        if (e == "eio") {
          o.error = DiskError::kEio;
        } else if (e == "enospc") {
          o.error = DiskError::kEnospc;
        } else {
          --pos_;
          fail("eio or enospc");
        }
      } else {
        fail("nth= or error=");
      }
    }
    return o;
  }
  Op crash() {
    Crash o;
    const char* expected = "seed=, truncate, corrupt or end of line";
    while (peek().kind != Token::Kind::kEnd) {
      if (peek().kind != Token::Kind::kWord) fail(expected);
      const std::string word = peek().text;
      if ((word == "truncate" || word == "corrupt") && o.damage == Damage::kNone) {
        next();
        o.damage = word == "truncate" ? Damage::kTruncate : Damage::kCorrupt;
        continue;
      }
      if (word != "seed") fail(expected);
      next();
      expect_punct('=');
      o.seed = unsigned_number("a seed");
    }
    return o;
  }
  Millis wait_timeout() {
    Millis ms = 0;
    while (auto key = option_key("timeout=")) {
      if (*key != "timeout") fail("timeout=");
      ms = millis("a timeout in ms");
    }
    return ms;
  }
  // An offset, or in a program `oldest` / `all` (the member's hand).
  template <typename T>
  void offset_or_hand(T& o) {
    if (peek().kind == Token::Kind::kWord && (peek().text == "oldest" || peek().text == "all")) {
      if (!in_program_)
        fail("an offset (oldest and all name a member's hand in fiber programs only)");
      o.which = next().text == "oldest" ? Which::kOldest : Which::kAll;
      return;
    }
    o.offset = unsigned_number(in_program_ ? "an offset, oldest or all" : "an offset");
  }
  template <typename T>
  T answer() {
    T o;
    o.topic = value("a topic");
    o.sub = value("a subscription name");
    offset_or_hand(o);
    o.member = value("a member name");
    return o;
  }

  Op dispatch(const std::string& name, const Token& verb) {
    if (name == "create_topic") return create_topic();
    if (name == "create_topic_if_absent") {
      Op op = create_topic();
      std::get<CreateTopic>(op).if_absent = true;
      return op;
    }
    if (name == "delete_topic") return DeleteTopic{value("a topic name")};
    if (name == "publish") return publish();
    if (name == "publish_via") {
      Publish o = std::get<Publish>(publish());
      o.via_publisher = true;
      return o;
    }
    if (name == "subscribe") return subscribe();
    if (name == "resubscribe") return resubscribe();
    if (name == "subscribe_pull") return subscribe_pull();
    if (name == "unsubscribe") {
      return Unsubscribe{value("a topic"), value("a subscription name")};
    }
    if (name == "seek") {
      return Seek{value("a topic"), value("a subscription name"), unsigned_number("an offset")};
    }
    if (name == "drain") return Drain{};
    if (name == "poll") return poll();
    if (name == "ack") return with_generation(answer<Ack>());
    if (name == "nack") return with_generation(answer<Nack>());
    if (name == "term") return with_generation(answer<Term>());
    if (name == "extend") {
      Extend o;
      o.topic = value("a topic");
      o.sub = value("a subscription name");
      offset_or_hand(o);
      o.member = value("a member name");
      o.extension = millis("an extension in ms");
      return with_generation(o);
    }
    if (name == "join_group") return join_group();
    if (name == "join_group_push") return join_group_push();
    if (name == "leave_group") {
      return LeaveGroup{value("a topic"), value("a group name"), value("a member name")};
    }
    if (name == "poll_group") return poll_group();
    if (name == "membership") {
      return GetMembership{value("a topic"), value("a group name"), value("a member name")};
    }
    if (name == "group_stats") return GetGroupStats{value("a topic"), value("a group name")};
    if (name == "expire") return Expire{};
    if (name == "advance") return Advance{millis("a duration in ms")};
    if (name == "stats") {
      return GetStats{value("a topic"), value("a subscription name")};
    }
    if (name == "dead_letters") {
      return GetDeadLetters{value("a topic"), value("a subscription name")};
    }
    if (name == "yield") {
      Yield o;
      if (peek().kind != Token::Kind::kEnd)
        o.count = unsigned_number("a number of scheduling points");
      return o;
    }
    if (name == "subscriptions") return Subscriptions{value("a topic")};
    if (name == "topics") return Topics{};
    if (name == "waiting_for_handler") return Topics{true};
    if (name == "poll_wait") return poll_wait();
    if (name == "wait_idle") return WaitIdle{wait_timeout()};
    if (name == "wait_delivered") return WaitDelivered{wait_timeout()};
    if (name == "end_offset") return EndOffset{value("a topic")};
    if (name == "publish_to") return publish_to();
    if (name == "partitions") return Partitions{value("a topic")};
    if (name == "oldest_offset") return OldestOffset{value("a topic")};
    if (name == "restart") return Restart{};
    if (name == "crash") return crash();
    if (name == "fault") return fault();
    if (name == "redrive") return Redrive{value("a topic"), value("a subscription name")};
    if (name == "redrive_to") {
      return RedriveTo{value("a topic"), value("a subscription name"), value("a topic")};
    }
    if (name == "purge_dead_letters") {
      return Purge{value("a topic"), value("a subscription name")};
    }
    if (name == "pause") return Pause{value("a topic"), value("a subscription name")};
    if (name == "resume") return Resume{value("a topic"), value("a subscription name")};
    if (name == "lag") return GetLag{value("a topic"), value("a subscription name")};
    if (name == "offset_for_time") {
      return OffsetForTime{value("a topic"), millis("a time in ms")};
    }
    if (name == "seek_to_time") {
      return SeekToTime{value("a topic"), value("a subscription name"), millis("a time in ms")};
    }
    throw ParseError(
        line_, verb.column,
        "an operation: create_topic, create_topic_if_absent, delete_topic, publish, subscribe, "
        "resubscribe, "
        "subscribe_pull, unsubscribe, seek, drain, poll, poll_wait, ack, nack, "
        "term, extend, expire, advance, stats, dead_letters, yield, subscriptions, topics, "
        "waiting_for_handler, "
        "wait_idle, wait_delivered, end_offset, oldest_offset, restart, crash, redrive, "
        "redrive_to, purge_dead_letters, pause, resume, lag, offset_for_time, seek_to_time, "
        "publish_to, partitions, join_group, join_group_push, leave_group, poll_group, "
        "membership or "
        "group_stats");
  }

  std::vector<Token> tokens_;
  std::size_t line_;
  bool in_program_ = false;
  std::size_t pos_ = 0;
};

// Whether a line starts with a space or a tab (a fiber's op).
bool indented(std::string_view line) {
  return !line.empty() && (line[0] == ' ' || line[0] == '\t');
}

}  // namespace

Script parse(std::string_view text) {
  Script out;
  std::size_t line_no = 0;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::vector<Token> tokens = tokenize(text.substr(begin, end - begin), line_no);
    if (tokens.size() > 1) out.push_back(LineParser(std::move(tokens), line_no).op());
    begin = end + 1;
  }
  return out;
}

Program parse_program(std::string_view text) {
  Program out;
  bool have_broker = false;
  std::size_t line_no = 0;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    std::vector<Token> tokens = tokenize(line, line_no);
    if (tokens.size() == 1) continue;  // blank or comment only
    const Token first = tokens[0];
    const bool is_word = first.kind == Token::Kind::kWord;
    if (!have_broker) {
      if (!is_word || first.text != "broker" || indented(line)) {
        throw ParseError(line_no, first.column,
                         "the program's first line: broker sync, broker lane or broker pool");
      }
      LineParser p(std::move(tokens), line_no, true);
      p.op_name();
      out.broker = p.broker_line();
      have_broker = true;
      continue;
    }
    if (is_word && first.text == "broker" && !indented(line)) {
      throw ParseError(line_no, first.column, "one broker line only, at the top");
    }
    if (is_word && first.text == "fiber" && !indented(line)) {
      LineParser p(std::move(tokens), line_no, true);
      p.op_name();
      out.fibers.push_back({p.fiber_line(), {}});
      continue;
    }
    if (out.fibers.empty() && indented(line)) {
      throw ParseError(line_no, 1,
                       "an op at the start of the line (only a fiber's ops are indented)");
    }
    if (!out.fibers.empty() && !indented(line)) {
      throw ParseError(line_no, 1,
                       "an indented op of fiber " + format_value(out.fibers.back().name) +
                           ", or `fiber NAME` (the setup ends at the first fiber)");
    }
    Op op = LineParser(std::move(tokens), line_no, true).op();
    (out.fibers.empty() ? out.setup : out.fibers.back().ops).push_back(std::move(op));
  }
  if (!have_broker) {
    throw ParseError(line_no, 1,
                     "the program's first line: broker sync, broker lane or broker pool");
  }
  return out;
}

std::vector<Program> parse_programs(std::string_view text) {
  // Split before every unindented `broker` line but the first; each part keeps its line
  // numbers (blank lines stand in for the parts above it).
  std::vector<std::size_t> starts = {0};
  std::vector<std::size_t> start_lines = {0};
  std::size_t line_no = 0, begin = 0;
  bool seen_broker = false;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    const bool broker_line =
        line.substr(0, 6) == "broker" && (line.size() == 6 || line[6] == ' ' || line[6] == '\t');
    if (broker_line && seen_broker) {
      starts.push_back(begin);
      start_lines.push_back(line_no);
    }
    seen_broker = seen_broker || broker_line;
    ++line_no;
    begin = end + 1;
  }
  starts.push_back(text.size());
  std::vector<Program> out;
  for (std::size_t i = 0; i + 1 < starts.size(); ++i) {
    const std::string part = std::string(start_lines[i], '\n') +
                             std::string(text.substr(starts[i], starts[i + 1] - starts[i]));
    out.push_back(parse_program(part));
  }
  return out;
}

}  // namespace oplang
