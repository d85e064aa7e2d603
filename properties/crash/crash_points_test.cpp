// SPEC R19/R20 under power cuts: scripts on a durable broker over the simulated disk, the
// disk dying at one write or sync, and the broker opened on what survived compared with
// what the model allows (crash_points.h). The random property picks the point; the
// exhaustive test crashes short scripts at every point in turn (the CrashMonkey / ALICE
// idea). A failure prints the case and the line that replays it:
//   CRASH_REPLAY=FILE build/default/properties/crash_points_test
//     --gtest_filter=CrashPoints.ReplayFromFile  (one line)
#include "crash_points.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "harness/broker_runner.h"
#include "op_generators.h"
#include "oplang/text.h"
#include "uniform.h"

namespace props::crash {
namespace {

using GenOp = oplang::Op (*)(const Hints&);

/// Crash scripts: the durable delivery mix, with handler scripts of verdicts only (an
/// effect inside a handler writes records of its own, between an offer and its commit).
oplang::Script gen_crash_script(std::size_t max_steps) {
  static const std::vector<GenOp> mix = {
      &gen_op<oplang::Publish>,       &gen_op<oplang::Publish>,       &gen_op<oplang::Publish>,
      &gen_op<oplang::Publish>,       &gen_op<oplang::Subscribe>,     &gen_op<oplang::Subscribe>,
      &gen_op<oplang::SubscribePull>, &gen_op<oplang::SubscribePull>, &gen_op<oplang::Drain>,
      &gen_op<oplang::Drain>,         &gen_op<oplang::Drain>,         &gen_op<oplang::Poll>,
      &gen_op<oplang::Poll>,          &gen_op<oplang::Poll>,          &gen_op<oplang::Ack>,
      &gen_op<oplang::Ack>,           &gen_op<oplang::Ack>,           &gen_op<oplang::Nack>,
      &gen_op<oplang::Expire>,        &gen_op<oplang::Advance>,       &gen_op<oplang::Seek>,
      &gen_op<oplang::Unsubscribe>,   &gen_op<oplang::CreateTopic>,   &gen_op<oplang::DeleteTopic>};
  oplang::Script script = {oplang::CreateTopic{"t0", 0, 0}, oplang::CreateTopic{"t1", 3, 0}};
  Hints hints;
  for (const auto& op : script) hints.observe(op);
  // Uniform whatever the size (uniform.h), so long scripts are as likely as
  // short ones; shrinking still goes towards one step.
  const std::size_t steps = *props::uniform_in<std::size_t>(1, max_steps + 1);
  for (std::size_t i = 0; i < steps; ++i) {
    oplang::Op op = mix[*props::uniform_in<std::size_t>(0, mix.size())](hints);
    // Mostly from the beginning, so consumers find messages and commit (the generators'
    // default start, the end, leaves a short script with little to confirm).
    const bool from_beginning = !props::one_in(4);
    const model::Start beginning{model::Start::Kind::kBeginning, 0};
    if (auto* s = std::get_if<oplang::Subscribe>(&op)) {
      for (auto& step : s->script) {
        model::Step plain;
        plain.verdict = step.verdict;
        step = plain;
      }
      if (from_beginning && s->group.empty()) s->start = beginning;
    }
    if (auto* s = std::get_if<oplang::SubscribePull>(&op); s != nullptr && from_beginning) {
      s->start = beginning;
    }
    // A third of the publishes are long, half of those zeros, so a short script's segment
    // spans pages and a power cut can keep a later page of it and lose an earlier one.
    if (auto* p = std::get_if<oplang::Publish>(&op); p != nullptr && props::one_in(3)) {
      p->payload.append(*props::uniform_in<std::size_t>(0, 6000), props::one_in(2) ? '\0' : 'p');
    }
    hints.observe(op);
    script.push_back(std::move(op));
  }
  return script;
}

/// A crash point spread over the ops that write (an op with many points, such as the first
/// publish to a topic, is not chosen more often than an ack), those that consume or move
/// a position weighted four times (they are rarer in a script, and write the commits),
/// then over that op's points.
std::uint64_t gen_point(const oplang::Script& script, bool always) {
  const std::vector<std::uint64_t> ends = points_per_op(script, always);
  std::vector<std::size_t> writers;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] == (i == 0 ? 0 : ends[i - 1])) continue;
    const bool setup = std::holds_alternative<oplang::Publish>(script[i]) ||
                       std::holds_alternative<oplang::CreateTopic>(script[i]) ||
                       std::holds_alternative<oplang::Subscribe>(script[i]) ||
                       std::holds_alternative<oplang::SubscribePull>(script[i]);
    writers.insert(writers.end(), setup ? 1 : 4, i);
  }
  if (writers.empty()) return 0;
  const std::size_t op = writers[*props::uniform_in<std::size_t>(0, writers.size())];
  const std::uint64_t first = op == 0 ? 0 : ends[op - 1];
  return first + *props::uniform_in<std::uint64_t>(0, ends[op] - first);
}

void check(const CrashCase& c) {
  const Verdict v = run_case(c);
  if (!v.failure.empty()) RC_FAIL(v.failure);
  RC_TAG(v.crashed ? "crashed" : "ended before the point");
  if (v.crashed) {
    const std::string text = oplang::print(c.script[v.op]);
    RC_TAG("in " + text.substr(0, text.find(' ')));
  }
}

RC_GTEST_PROP(CrashPoints, ACrashAtAnyWriteOrSyncLosesNothingThatReturned, ()) {
  CrashCase c;
  c.script = gen_crash_script(24);
  c.point = gen_point(c.script, true);
  c.seed = *props::uniform_in<std::uint64_t>(0, 1000);
  check(c);
}

RC_GTEST_PROP(CrashPoints, ACrashWithoutFsyncKeepsAPrefixOfEachLog, ()) {
  CrashCase c;
  c.always = false;
  c.script = gen_crash_script(24);
  c.point = gen_point(c.script, false);
  c.seed = *props::uniform_in<std::uint64_t>(0, 1000);
  check(c);
}

// R33: the disk fails one call (EIO, or ENOSPC: half an append written) and the script
// goes on: that call throws IoError and is undecided, every later call throws IoError, and a
// clean restart finds a state the failed call may have left.
RC_GTEST_PROP(CrashPoints, AFailedWriteOrSyncIsUndecidedAndRefusesEveryLaterCall, ()) {
  CrashCase c;
  c.fault = props::one_in(2) ? CrashCase::Fault::kEio : CrashCase::Fault::kEnospc;
  c.script = gen_crash_script(24);
  c.point = gen_point(c.script, true);
  check(c);
}

// ---- damage at rest (R21) ----

/// Fails the property with `why` unless ok.
void require(bool ok, const std::string& why) {
  if (!ok) RC_FAIL(why);
}

/// Every kept message of every topic the model has, by topic: what a reader from the
/// beginning is handed (offset, payload). Partitioned topics are read through their
/// partitions; what cannot be read (a topic with subscriptions that refuse a probe) is left out.
template <class Runner>
std::map<std::string, std::vector<std::pair<model::Offset, std::string>>> logs_of(
    Runner& runner, const std::vector<std::string>& topics) {
  std::map<std::string, std::vector<std::pair<model::Offset, std::string>>> out;
  for (const std::string& t : topics) {
    oplang::SubscribePull probe;
    probe.topic = t;
    probe.name = "~damage-probe";
    probe.max_deliveries = 0;
    probe.start = model::Start{model::Start::Kind::kBeginning, 0};
    if (runner.step(probe).error) continue;
    const oplang::Outcome got = runner.step(oplang::Poll{t, probe.name, "probe", 100000});
    const auto* received = std::get_if<std::vector<model::Received>>(&got.value);
    if (received == nullptr) continue;
    auto& log = out[t];
    for (const model::Received& r : *received) log.emplace_back(r.offset, r.payload);
  }
  return out;
}

/// The topics (and partitions) a model holds.
std::vector<std::string> topics_of(oplang::ModelRunner& model) {
  std::vector<std::string> out;
  for (const std::string& t : model.model().topics()) {
    const std::uint32_t parts = model.model().partitions(t);
    if (parts <= 1) out.push_back(t);
    for (std::uint32_t p = 0; parts > 1 && p < parts; ++p)
      out.push_back(t + "-" + std::to_string(p));
  }
  return out;
}

/// The newest segment of each topic directory: the only file whose tail a crash can tear.
bool newest_segment(const std::vector<std::string>& files, const std::string& path) {
  const std::string dir = path.substr(0, path.rfind('/'));
  if (!path.ends_with(".seg")) return false;
  for (const std::string& f : files) {
    if (f.ends_with(".seg") && f.substr(0, f.rfind('/')) == dir && f > path) return false;
  }
  return true;
}

// R21 under damage at rest: a generated script's directory, closed cleanly, then one bit
// flipped, a block zeroed or the file cut at any byte of any file (or an older segment
// lost). Opening it must give a typed CorruptLog naming the damaged file at or before the
// damaged byte, or a recovery whose only cuts are torn tails at the end of a newest segment
// (or of the journal), each reported; every message a reader is handed is the one
// published at its offset; a log shorter than before is explained by a reported cut of its
// newest segment, so a record followed by a good record is never dropped silently.
RC_GTEST_PROP(CrashPoints, DamageAtAnyByteIsATypedErrorOrAReportedTornTail, ()) {
  const oplang::Script script = gen_crash_script(16);
  harness::DurableSetup setup;
  setup.disk = std::make_shared<broker::sim::SimFileSystem>();
  oplang::ModelRunner model;
  // What was published at each offset of each log (a partition's under "topic-p"). A topic
  // made again after a delete publishes from offset 0 again, over what it had.
  std::map<std::string, std::map<model::Offset, std::string>> published;
  const auto record = [&published, &model](const oplang::Op& op, const oplang::Outcome& o) {
    const auto* at = std::get_if<oplang::OffsetResult>(&o.value);
    if (const auto* p = std::get_if<oplang::Publish>(&op); p != nullptr && at != nullptr) {
      // A partitioned topic's publish lands on "topic-p"; a partition's (named so) on itself.
      const bool routed = at->partition && model.model().partitions(p->topic) > 1;
      const std::string log = routed ? p->topic + "-" + std::to_string(*at->partition) : p->topic;
      published[log][at->offset] = p->payload;
    }
    if (const auto* p = std::get_if<oplang::PublishTo>(&op); p != nullptr && at != nullptr) {
      published[p->topic + "-" + std::to_string(p->partition)][at->offset] = p->payload;
    }
  };
  {
    harness::BrokerRunner runner(setup);
    for (const oplang::Op& op : script) {
      runner.step(op);
      record(op, model.step(op));
    }
    // More records, so topics have several segments (256 bytes each) to damage.
    const std::size_t extra = *props::uniform_in<std::size_t>(0, 12);
    for (std::size_t i = 0; i < extra; ++i) {
      const oplang::Op op =
          oplang::Publish{i % 2 == 0 ? "t0" : "t1",
                          "extra-" + std::to_string(i) + "-" + std::string(20 + 7 * (i % 5), 'x'),
                          {},
                          {}};
      runner.step(op);
      record(op, model.step(op));
    }
  }  // a clean close: everything synced
  model.model().restart();
  const std::vector<std::string> topics = topics_of(model);
  oplang::ModelRunner reader = model;
  const auto before = logs_of(reader, topics);

  broker::sim::SimFileSystem& disk = *setup.disk;
  std::vector<std::string> files;
  for (const std::string& f : disk.files()) {
    if (!f.ends_with("/LOCK") && disk.exists(f) && disk.size(f) > 0) files.push_back(f);
  }
  RC_PRE(!files.empty());
  // Half the time an older segment, where damage has records after it (if there is one).
  std::vector<std::string> older;
  for (const std::string& f : files) {
    if (f.ends_with(".seg") && !newest_segment(files, f)) older.push_back(f);
  }
  const std::vector<std::string>& pool = !older.empty() && props::one_in(2) ? older : files;
  const std::string file = pool[*props::uniform_in<std::size_t>(0, pool.size())];
  const std::uint64_t size = disk.size(file);
  const std::uint64_t byte = *props::uniform_in<std::uint64_t>(0, size);
  const int kind = *props::uniform_in(0, 4);
  const std::string bytes_before = disk.read(file, 0, size);
  std::string damage;
  switch (kind) {
    case 0: {
      const int bit = *props::uniform_in(0, 8);
      disk.flip_bit(file, byte, bit);
      damage = "bit " + std::to_string(bit) + " of byte " + std::to_string(byte) + " flipped";
      break;
    }
    case 1: {
      const std::uint64_t length = *props::uniform_in<std::uint64_t>(1, 513);
      disk.zero_range(file, byte, length);
      damage = std::to_string(length) + " bytes from " + std::to_string(byte) + " zeroed";
      break;
    }
    case 2:
      disk.cut(file, byte);
      damage = "cut at byte " + std::to_string(byte);
      break;
    default:
      // A lost newest segment leaves nothing behind that says it was there: left out.
      RC_PRE(file.ends_with(".seg") && !newest_segment(files, file));
      disk.lose(file);
      damage = "lost";
      break;
  }
  // The first byte the damage changed (zeroing bytes that were zero changes nothing).
  std::uint64_t changed = byte;
  if (kind == 1) {
    const std::string now = disk.read(file, 0, size);
    changed = size;
    for (std::uint64_t i = byte; i < size && changed == size; ++i) {
      if (now[i] != bytes_before[i]) changed = i;
    }
  }
  RC_TAG(std::string(kind == 0   ? "flip"
                     : kind == 1 ? "zero"
                     : kind == 2 ? "cut"
                                 : "lose") +
         (file.ends_with(".seg") ? " segment" : " " + file.substr(file.rfind('/') + 1)));
  const std::string where = "\n-- " + file + ": " + damage + "\n-- the script:\n" +
                            oplang::print(script) + "-- the disk:\n" + disk.describe();

  setup.repair = props::one_in(2);
  RC_TAG(setup.repair ? "repair" : "no repair");
  std::map<std::string, std::uint64_t> sizes;   // every file before the open
  std::map<std::string, std::string> journals;  // each journal's bytes before the open
  for (const std::string& f : disk.files()) {
    if (disk.exists(f)) sizes[f] = disk.size(f);
    if (disk.exists(f) && f.ends_with("/journal")) journals[f] = disk.read(f, 0, sizes[f]);
  }
  std::unique_ptr<harness::BrokerRunner> b;  // the same disk, opened again
  try {
    b = std::make_unique<harness::BrokerRunner>(setup);
  } catch (const broker::CorruptLog& e) {
    RC_TAG("CorruptLog");
    // Repair cuts what it finds; only a journal whose header is damaged stops it.
    require(!setup.repair || (e.file() == file && file.ends_with("/journal") && e.position() == 0),
            "repair threw " + std::string(e.what()) + where);
    const std::string dir = file.substr(0, file.rfind('/'));
    // A segment cut at a record's end, or lost, looks whole: the gap shows at the next one.
    if (kind == 3 || (kind == 2 && file.ends_with(".seg") && e.file() != file)) {
      require(e.file().starts_with(dir),
              "a lost segment reported as " + std::string(e.what()) + where);
    } else {
      require(e.file() == file && e.position() <= changed,
              "CorruptLog must name the damaged file at or before the damaged byte: " +
                  std::string(e.what()) + where);
    }
    return;
  } catch (const broker::NotBrokerStorage& e) {
    // A journal whose magic is damaged is a file of someone else's, as far as anyone can tell.
    require(file.ends_with("/journal") && byte < 8 && kind != 2,
            "opening a damaged directory threw " + std::string(e.what()) + where);
    RC_TAG("NotBrokerStorage");
    return;
  } catch (const broker::Error& e) {
    RC_FAIL("opening a damaged directory threw " + std::string(e.what()) + where);
  }
  const broker::RecoveryReport& report = b->broker().recovery();
  std::set<std::string> cut_logs;  // topic directories whose newest segment lost its tail
  bool journal_cut = false;
  std::map<std::string, std::uint64_t> reported;  // bytes each file lost, as reported
  for (const broker::Truncation& t : report.truncations) {
    reported[t.file] += t.bytes;
    if (t.file.ends_with("/journal")) {
      journal_cut = true;
    } else {
      cut_logs.insert(t.file.substr(0, t.file.rfind('/')));
    }
    if (t.reason != "torn tail") {
      require(setup.repair,
              "a cut that is no torn tail without repair: " + t.file + " " + t.reason + where);
      continue;
    }
    require(t.file == file, "a torn tail cut from a file that was not damaged: " + t.file + where);
    require(t.file.ends_with("/journal") || newest_segment(files, t.file),
            "a torn tail cut from a segment that is not its topic's newest: " + t.file + where);
  }
  // Nothing is dropped that the report does not count: each file is shorter by exactly
  // what was reported of it (a removed file by its whole size; the journal, if it was cut
  // or written anew, is left out: recovery may save what it moved back, and a save may
  // compact; a deleted topic's leftover segments go unreported).
  const auto written_anew = [&](const std::string& f) {
    const std::string& old = journals.at(f);
    const std::string now = disk.exists(f) ? disk.read(f, 0, disk.size(f)) : std::string();
    const std::size_t common = std::min(old.size(), now.size());
    return old.compare(0, common, now, 0, common) != 0;
  };
  for (const auto& [f, before_size] : sizes) {
    if (f.ends_with("/LOCK") ||
        (f.ends_with("/journal") && (reported.count(f) != 0 || written_anew(f)))) {
      continue;
    }
    const std::uint64_t now = disk.exists(f) ? disk.size(f) : 0;
    const std::uint64_t lost = before_size >= now ? before_size - now : 0;
    const std::uint64_t said = reported.count(f) != 0 ? reported.at(f) : 0;
    // A deleted topic's directory goes whole and unreported; a live one's keeps files.
    const std::string dir = f.substr(0, f.rfind('/') + 1);
    bool dir_touched = false;
    for (const std::string& g : disk.files()) dir_touched = dir_touched || g.starts_with(dir);
    for (const auto& [g, n] : reported) dir_touched = dir_touched || g.starts_with(dir);
    const bool deleted_topic = !disk.exists(f) && said == 0 && f.ends_with(".seg") && !dir_touched;
    // A log whose every segment was dropped starts an empty one named by its end (R18):
    // a dropped file may come back as just a header.
    const bool made_anew = said == before_size && now == 24;
    require(lost == said || deleted_topic || made_anew, f + " lost " + std::to_string(lost) +
                                                            " bytes, the report says " +
                                                            std::to_string(said) + where);
  }
  RC_TAG(report.truncations.empty() ? "recovered, nothing cut" : "recovered, torn tail cut");
  const auto after = logs_of(*b, topics);
  // A file cut at a record's end lost its tail and nothing after it: that is a torn tail
  // with nothing left to see, allowed where torn tails are (the newest segment, the journal).
  const bool tail_lost = kind == 2 && (file.ends_with("/journal") || newest_segment(files, file));
  const bool some_cut = journal_cut || !cut_logs.empty() || tail_lost;
  for (const auto& [topic, messages] : before) {
    const auto it = after.find(topic);
    if (it == after.end()) {
      require(journal_cut || (tail_lost && file.ends_with("/journal")),
              topic + " is gone, and no cut of the journal says why" + where);
      continue;
    }
    const auto& kept = it->second;
    for (std::size_t i = 0; i < kept.size(); ++i) {
      const auto& [offset, payload] = kept[i];
      const auto truth = published[topic].find(offset);
      require(truth != published[topic].end() && truth->second == payload,
              topic + " hands out offset " + std::to_string(offset) + " '" + payload +
                  "', which was not published there" + where);
      if (i > 0 && offset != kept[i - 1].first + 1) {
        RC_FAIL(topic + " skips from offset " + std::to_string(kept[i - 1].first) + " to " +
                std::to_string(offset) + where);
      }
    }
    const model::Offset end_before = messages.empty() ? 0 : messages.back().first + 1;
    const model::Offset end_after = kept.empty() ? 0 : kept.back().first + 1;
    require(end_after >= end_before || some_cut, topic + " ends at " + std::to_string(end_after) +
                                                     " instead of " + std::to_string(end_before) +
                                                     ", and no cut was reported" + where);
  }
}

/// Short scripts that between them write every kind of record: topics created and
/// deleted, segments rolled and dropped by retention, subscribes, commits of pull and
/// push subscriptions, dead letters, a seek, and a journal compaction.
const std::vector<std::string> kShortScripts = {
    "create_topic t\npublish t a\npublish t b\nsubscribe_pull t p start=begin\n"
    "poll t p w max=2\nack t p 1 w\nack t p 0 w\n",
    "create_topic t messages=2\nsubscribe t s max=2 start=begin script=[reject,reject,confirm]\n"
    "publish t m0\npublish t m1\npublish t m2\ndrain\ndrain\ndrain\n",
    "create_topic t\nsubscribe_pull t p timeout=10 max=1\npublish t x\npoll t p w\nadvance 10\n"
    "expire\nseek t p 0\npoll t p w\nnack t p 0 w\nunsubscribe t p\ndelete_topic t\n"
    "create_topic t\npublish t y\n",
    "create_topic t\nsubscribe_pull t p\npublish t \"a longer payload that fills a segment\"\n"
    "publish t \"another longer payload, so the segment rolls\"\npoll t p w max=5\nack t p 0 w\n"
    "ack t p 1 w\nsubscribe t s group=g start=begin\ndrain\n",
    // Retention over rolling segments: publishes that drop whole segments as they go.
    "create_topic t messages=3\nsubscribe_pull t p start=begin\n"
    "publish t \"payload number one, of some length\"\n"
    "publish t \"payload number two, of some length\"\n"
    "publish t \"payload number three of some length\"\n"
    "publish t \"payload number four, of some length\"\n"
    "publish t \"payload number five, of some length\"\n"
    "publish t \"payload number six, of some length\"\n"
    "publish t \"payload number seven of some length\"\n"
    "poll t p w max=5\n",
    // Enough commits to compact the journal (journal_compact_bytes 1024) twice.
    "create_topic t\nsubscribe_pull t p start=begin timeout=50 max=9\n"
    "publish t a\npublish t b\npublish t c\npublish t d\npublish t e\npublish t f\n"
    "poll t p w1 max=1\nnack t p 0 w1\npoll t p w1 max=1\nnack t p 0 w1\n"
    "poll t p w1 max=1\nnack t p 0 w1\npoll t p w1 max=1\nnack t p 0 w1\n"
    "poll t p w1 max=1\nnack t p 0 w1\npoll t p w1 max=1\nnack t p 0 w1\n"
    "poll t p w1 max=1\nnack t p 0 w1\npoll t p w1 max=1\nnack t p 0 w1\n"
    "poll t p w2 max=6\nack t p 0 w2\nack t p 1 w2\nack t p 2 w2\nack t p 3 w2\n"
    "ack t p 4 w2\nack t p 5 w2\n",
    // A drain saves each attempt before its handler (R34): a failed save leaves it spent.
    "create_topic t\nsubscribe t s max=1 start=begin durable_attempts\npublish t a\ndrain\n",
    // An expire commits each pull subscription in turn: a cut between two leaves the first.
    "create_topic t messages=1\nsubscribe_pull t p start=begin\nsubscribe_pull t q start=begin\n"
    "publish t a\npublish t b\nexpire\n",
    // Records that span pages of a mapped segment: a power cut may keep a later page of one
    // and lose an earlier one, or keep the zeros reserved after them.
    "create_topic t\nsubscribe_pull t p start=begin\npublish t \"" + std::string(5000, 'p') +
        "\"\npublish t \"" + std::string(3000, 'q') + "\"\npublish t c\npoll t p w max=3\n"
        "ack t p 0 w\n",
};

TEST(CrashPoints, EveryPointOfShortScriptsRecoversToAnAllowedState) {
  std::size_t cases = 0;
  std::size_t crashed = 0;
  for (const bool always : {true, false}) {
    for (const std::string& text : kShortScripts) {
      CrashCase c;
      c.always = always;
      c.script = oplang::parse(text);
      const std::uint64_t points = count_points(c.script, always);
      for (std::uint64_t p = 0; p < points; ++p) {
        for (std::uint64_t seed : {0, 1, 2, 3}) {
          c.point = p;
          c.seed = seed;
          const Verdict v = run_case(c);
          ++cases;
          crashed += v.crashed ? 1 : 0;
          ASSERT_TRUE(v.failure.empty()) << v.failure;
        }
      }
    }
  }
  EXPECT_EQ(crashed, cases) << "every point below the count must crash the script";
  std::printf("crash points: %zu cases checked\n", cases);
}

// Every I/O call of the short scripts, failed in turn with EIO and with ENOSPC (R33).
TEST(CrashPoints, EveryErrorPointOfShortScriptsLeavesAnAllowedState) {
  std::size_t cases = 0;
  std::size_t fired = 0;
  std::size_t stores = 0;
  for (const std::string& text : kShortScripts) {
    CrashCase c;
    c.script = oplang::parse(text);
    const std::uint64_t points = count_points(c.script, true);
    stores += 2 * count_store_points(c.script, true);  // once per fault
    for (std::uint64_t p = 0; p < points; ++p) {
      for (const auto fault : {CrashCase::Fault::kEio, CrashCase::Fault::kEnospc}) {
        c.point = p;
        c.fault = fault;
        const Verdict v = run_case(c);
        ++cases;
        fired += v.crashed ? 1 : 0;
        ASSERT_TRUE(v.failure.empty()) << v.failure;
      }
    }
  }
  EXPECT_EQ(fired, cases - stores)
      << "every point below the count but a store must fail a call of the script";
  std::printf("error points: %zu cases checked\n", cases);
}

/// The text of a file, or "" if it cannot be read.
std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Cases the random properties found, kept in properties/crash/cases: each at its own point
// and, with its fault (or both errors), at every other point of its script.
TEST(CrashPoints, EveryKeptCaseLeavesAnAllowedStateAtEveryPoint) {
  std::size_t kept = 0;
  std::size_t cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CRASH_CASES_DIR)) {
    if (entry.path().extension() != ".case") continue;
    std::string error;
    const std::optional<CrashCase> found = parse_case(read_text(entry.path()), error);
    ASSERT_TRUE(found) << entry.path() << ": " << error;
    ++kept;
    const Verdict own = run_case(*found);
    EXPECT_TRUE(own.crashed) << entry.path() << ": the script ends before point " << found->point;
    ASSERT_TRUE(own.failure.empty()) << entry.path() << "\n" << own.failure;
    CrashCase c = *found;
    const std::uint64_t points = count_points(c.script, c.always);
    const std::vector<CrashCase::Fault> faults =
        c.fault == CrashCase::Fault::kCrash
            ? std::vector<CrashCase::Fault>{CrashCase::Fault::kCrash}
            : std::vector<CrashCase::Fault>{CrashCase::Fault::kEio, CrashCase::Fault::kEnospc};
    for (std::uint64_t p = 0; p < points; ++p) {
      for (const CrashCase::Fault fault : faults) {
        c.point = p;
        c.fault = fault;
        const Verdict v = run_case(c);
        ++cases;
        ASSERT_TRUE(v.failure.empty()) << entry.path() << " at point " << p << "\n" << v.failure;
      }
    }
  }
  EXPECT_GT(kept, 0u) << "no .case file in " << CRASH_CASES_DIR;
  std::printf("kept crash cases: %zu, %zu points checked\n", kept, cases);
}

TEST(CrashPoints, ReplayFromFile) {
  const char* file = std::getenv("CRASH_REPLAY");
  if (file == nullptr) GTEST_SKIP() << "set CRASH_REPLAY=FILE (a case a failure printed)";
  std::ifstream in(file);
  ASSERT_TRUE(in) << "cannot read " << file;
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  const std::optional<CrashCase> c = parse_case(text.str(), error);
  ASSERT_TRUE(c) << file << ": " << error;
  const Verdict v = run_case(*c);
  EXPECT_TRUE(v.crashed) << "the script ends before point " << c->point;
  EXPECT_TRUE(v.failure.empty()) << v.failure;
}

}  // namespace
}  // namespace props::crash
