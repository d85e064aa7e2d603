// The fault workload (conformance/faults.h).
#include "conformance/faults.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <variant>

#include "model/errors.h"

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

const std::string kTopic = "faults";
const std::string kSub = "s";
// An engine that serves no call for this long is gone: the run ends as an engine failure.
constexpr auto kNoProgressBound = std::chrono::seconds(30);
// The final drain: rounds of polls until two in a row (an ack timeout apart) find nothing.
constexpr auto kDrainBound = std::chrono::seconds(45);
constexpr std::size_t kDrainBatch = 200;

std::int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sleeps until `until` in short slices, returning early (false) once `done` is set.
bool sleep_until(Clock::time_point until, const std::atomic<bool>& done) {
  while (Clock::now() < until) {
    if (done) return false;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(20)));
  }
  return true;
}

// Whether a kind's schedule item carries a draw that places it (AT:KIND:MS:WHERE).
bool placed(Fault::Kind kind) {
  return kind == Fault::Kind::kDamage || kind == Fault::Kind::kPartition ||
         kind == Fault::Kind::kMembership || kind == Fault::Kind::kDiskError;
}

}  // namespace

std::string fault_kind_name(Fault::Kind kind) {
  switch (kind) {
    case Fault::Kind::kKill9:
      return "kill9";
    case Fault::Kind::kRestart:
      return "restart";
    case Fault::Kind::kPause:
      return "pause";
    case Fault::Kind::kLoseUnsynced:
      return "lose-unsynced";
    case Fault::Kind::kDamage:
      return "damage";
    case Fault::Kind::kPartition:
      return "partition";
    case Fault::Kind::kMembership:
      return "membership";
    case Fault::Kind::kDiskError:
      return "disk-error";
  }
  return "?";
}

std::vector<Fault::Kind> fault_kinds(const std::string& kinds) {
  static const std::vector<Fault::Kind> kAll = {
      Fault::Kind::kKill9,        Fault::Kind::kRestart,  Fault::Kind::kPause,
      Fault::Kind::kLoseUnsynced, Fault::Kind::kDamage,   Fault::Kind::kPartition,
      Fault::Kind::kMembership,   Fault::Kind::kDiskError};
  if (kinds == "both") return {Fault::Kind::kKill9, Fault::Kind::kRestart};
  std::vector<Fault::Kind> out;
  std::size_t from = 0;
  while (from <= kinds.size()) {
    const std::size_t comma = std::min(kinds.find(',', from), kinds.size());
    const std::string name = kinds.substr(from, comma - from);
    from = comma + 1;
    auto it = std::find_if(kAll.begin(), kAll.end(),
                           [&](Fault::Kind k) { return fault_kind_name(k) == name; });
    if (it == kAll.end() || std::find(out.begin(), out.end(), *it) != out.end()) {
      throw std::invalid_argument(
          "fault kinds are a comma-separated list of kill9, restart, pause, lose-unsynced, "
          "damage, partition, membership and disk-error (each once), or both (kill9,restart); "
          "not " +
          kinds);
    }
    out.push_back(*it);
  }
  return out;
}

std::string schedule_text(const std::vector<Fault>& schedule) {
  if (schedule.empty()) return "none";
  std::string out;
  for (const Fault& f : schedule) {
    out += (out.empty() ? "" : ",") + std::to_string(f.at_ms) + ":" + fault_kind_name(f.kind);
    if (f.kind != Fault::Kind::kRestart) out += ":" + std::to_string(f.down_ms);
    if (placed(f.kind)) {
      out += ":" + std::to_string(f.where);
    }
  }
  return out;
}

std::vector<Fault> parse_schedule(const std::string& text, double seconds) {
  std::vector<Fault> out;
  if (text == "none") return out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    const std::string item = text.substr(from, comma - from);
    from = comma + 1;
    auto bad = [&](const std::string& why) {
      return std::invalid_argument("schedule item '" + item + "': " + why +
                                   " (items are AT:KIND[:MS[:WHERE]], comma-separated, or none)");
    };
    std::vector<std::string> parts;
    for (std::size_t p = 0; p <= item.size();) {
      const std::size_t colon = std::min(item.find(':', p), item.size());
      parts.push_back(item.substr(p, colon - p));
      p = colon + 1;
    }
    auto number = [&](const std::string& digits, std::size_t longest = 9) {
      if (digits.empty() || digits.size() > longest ||
          digits.find_first_not_of("0123456789") != std::string::npos) {
        throw bad("'" + digits + "' is not a number");
      }
      try {
        return std::stoull(digits);
      } catch (const std::out_of_range&) {
        throw bad("'" + digits + "' is too large");
      }
    };
    if (parts.size() < 2 || parts.size() > 4) throw bad("not AT:KIND[:MS[:WHERE]]");
    Fault f;
    f.at_ms = static_cast<std::int64_t>(number(parts[0]));
    const std::vector<Fault::Kind> kind = fault_kinds(parts[1]);
    if (kind.size() != 1) throw bad("one kind per item");
    f.kind = kind[0];
    const std::size_t want = f.kind == Fault::Kind::kRestart ? 2 : placed(f.kind) ? 4 : 3;
    if (parts.size() != want) {
      throw bad(f.kind == Fault::Kind::kRestart ? "a restart has no MS"
                : placed(f.kind)                ? "this kind is AT:KIND:MS:WHERE"
                                                : "not AT:KIND:MS");
    }
    if (parts.size() >= 3) f.down_ms = static_cast<std::int64_t>(number(parts[2]));
    if (parts.size() == 4) f.where = number(parts[3], 20);
    if (!out.empty() && f.at_ms < out.back().at_ms) throw bad("times must not go back");
    if (static_cast<double>(f.at_ms) >= seconds * 1000) throw bad("past the run's end");
    out.push_back(f);
  }
  return out;
}

std::vector<Fault> fault_schedule(const FaultOptions& options) {
  const std::vector<Fault::Kind> kinds = fault_kinds(options.kinds);
  std::mt19937_64 rng(options.seed);
  std::vector<Fault> out;
  const auto end_ms = static_cast<std::int64_t>(options.seconds * 1000) - 1000;
  for (std::int64_t at = 1000; at < end_ms; at += 1500 + static_cast<std::int64_t>(rng() % 2500)) {
    Fault f;
    f.at_ms = at;
    f.kind = kinds.size() == 1 ? kinds[0] : kinds[rng() % kinds.size()];
    switch (f.kind) {
      case Fault::Kind::kKill9:
      case Fault::Kind::kLoseUnsynced:
        f.down_ms = static_cast<std::int64_t>(rng() % 800);
        break;
      case Fault::Kind::kDamage:
        f.down_ms = static_cast<std::int64_t>(rng() % 800);
        f.where = rng();
        break;
      case Fault::Kind::kPartition:
      case Fault::Kind::kMembership:
        f.down_ms = 1000 + static_cast<std::int64_t>(rng() % 4000);
        f.where = rng();
        break;
      case Fault::Kind::kPause:
        f.down_ms = 200 + static_cast<std::int64_t>(rng() % 2300);
        break;
      case Fault::Kind::kDiskError:
        f.down_ms = 200 + static_cast<std::int64_t>(rng() % 1800);
        f.where = rng();
        break;
      case Fault::Kind::kRestart:
        break;
    }
    out.push_back(f);
  }
  return out;
}

FaultReport run_faults(Target& target, const FaultControl& control, const FaultOptions& options,
                       const std::function<bool()>& stop) {
  FaultReport report;
  report.faults = options.schedule ? *options.schedule : fault_schedule(options);
  for (const Fault& f : report.faults) {
    const bool offered =
        f.kind == Fault::Kind::kKill9        ? control.kill9 && control.restart
        : f.kind == Fault::Kind::kRestart    ? control.stop && control.restart
        : f.kind == Fault::Kind::kPause      ? control.pause && control.resume
        : f.kind == Fault::Kind::kDamage     ? control.damage && control.restart
        : f.kind == Fault::Kind::kPartition  ? control.partition && control.heal
        : f.kind == Fault::Kind::kMembership ? control.remove_member && control.add_member
        : f.kind == Fault::Kind::kDiskError
            ? control.fail_disk && control.heal_disk && control.kill9 && control.restart
            : control.lose_unsynced && control.restart;
    if (!offered) {
      throw std::invalid_argument("the fault " + fault_kind_name(f.kind) +
                                  " is not offered for this engine");
    }
  }
  // The client's choices come from their own stream of the seed, apart from the schedule.
  std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ULL + 17);
  report.consumers = options.consumers > 0 ? options.consumers : 1 + static_cast<int>(rng() % 3);

  auto must = [&](const oplang::Op& op, const char* what) {
    const oplang::Outcome o = target.step(op);
    if (o.error) throw TargetFailure(std::string("fault run: ") + what + " refused");
  };
  must(oplang::CreateTopic{kTopic}, "create_topic");
  oplang::SubscribePull sp;
  sp.topic = kTopic;
  sp.name = kSub;
  sp.ack_timeout = options.ack_timeout_ms;
  sp.max_deliveries = 0;  // no dead letters: every value stays deliverable until acked
  sp.start = model::Start{model::Start::Kind::kBeginning, 0};
  sp.durable_attempts = options.durable_attempts;
  must(sp, "subscribe_pull");
  if (control.after_setup) control.after_setup();

  const auto start = Clock::now();
  std::atomic<bool> done{false};
  std::atomic<std::size_t> faults_done{0};
  // Times the server went down, counted once it is down and before it starts again: a call
  // that read a higher value began after the server of an earlier one was gone.
  std::atomic<std::size_t> epoch{0};
  std::exception_ptr fault_error;
  std::thread faulter([&] {
    try {
      for (const Fault& f : report.faults) {
        if (!sleep_until(start + std::chrono::milliseconds(f.at_ms), done)) return;
        const auto began = Clock::now();
        switch (f.kind) {
          case Fault::Kind::kPartition:
            report.damaged[faults_done] = control.partition(f.where);
            // Cut for a while, whatever: the heal must happen even if the run is ending.
            std::this_thread::sleep_for(std::chrono::milliseconds(f.down_ms));
            control.heal();
            report.took_ms.push_back(ms_since(began));
            ++faults_done;
            continue;  // every process kept running
          case Fault::Kind::kMembership:
            report.damaged[faults_done] = control.remove_member(f.where);
            // Out for a while, whatever: it must come back even if the run is ending.
            std::this_thread::sleep_for(std::chrono::milliseconds(f.down_ms));
            control.add_member();
            report.took_ms.push_back(ms_since(began));
            ++faults_done;
            continue;  // every process kept running
          case Fault::Kind::kPause:
            control.pause();
            // Paused for a while, whatever: the resume must happen even if the run is ending.
            std::this_thread::sleep_for(std::chrono::milliseconds(f.down_ms));
            control.resume();
            report.took_ms.push_back(ms_since(began));
            ++faults_done;
            continue;  // the process kept its memory: not down
          case Fault::Kind::kKill9:
          case Fault::Kind::kLoseUnsynced:
            (f.kind == Fault::Kind::kKill9 ? control.kill9 : control.lose_unsynced)();
            ++epoch;
            // Down for a while, whatever: the restart must happen even if the run is ending.
            std::this_thread::sleep_for(std::chrono::milliseconds(f.down_ms));
            break;
          case Fault::Kind::kRestart:
            control.stop();
            ++epoch;
            break;
          case Fault::Kind::kDamage:
            report.damaged[faults_done] = control.damage(f.where);
            ++epoch;
            std::this_thread::sleep_for(std::chrono::milliseconds(f.down_ms));
            break;
          case Fault::Kind::kDiskError:
            report.damaged[faults_done] = control.fail_disk(f.where);
            // Failing for a while, whatever: the heal must happen even if the run is ending.
            std::this_thread::sleep_for(std::chrono::milliseconds(f.down_ms));
            control.heal_disk();
            // Then reopened, as R33 asks of a broker that failed a write (an engine that
            // exited at the failure, as Redis under always does, is started again).
            control.kill9();
            ++epoch;
            break;
        }
        if (f.kind == Fault::Kind::kDamage && control.repair) {
          try {
            control.restart();
          } catch (const TargetFailure& e) {
            // It refused its damaged data (SPEC R21): as an operator would, the engine's own
            // repair, and the run goes on, judged; the report says what the repair cut.
            if (options.progress) {
              options.progress(std::string("the engine refused to start: ") + e.what() +
                               "; repairing");
            }
            report.damaged[faults_done] += "; it refused to start (" + std::string(e.what()) +
                                           "); repaired: " + control.repair();
          }
        } else {
          control.restart();
        }
        report.took_ms.push_back(ms_since(began));
        ++faults_done;
      }
    } catch (...) {
      fault_error = std::current_exception();
      done = true;
    }
  });
  struct Join {
    std::thread& t;
    std::atomic<bool>& done;
    ~Join() {
      done = true;
      if (t.joinable()) t.join();
    }
  } join{faulter, done};

  std::size_t poll_number = 0;
  auto last_served = Clock::now();
  // One call: its outcome, or nullopt if the engine failed it (recorded, and the run goes on).
  std::size_t call_epoch = 0;  // the epoch as the last call began
  auto call = [&](const oplang::Op& op) -> std::optional<oplang::Outcome> {
    call_epoch = epoch.load();
    try {
      oplang::Outcome o = target.step(op);
      last_served = Clock::now();
      return o;
    } catch (const TargetFailure& e) {
      ++report.call_errors;
      report.last_call_error = e.what();
      if (Clock::now() - last_served > kNoProgressBound) {
        throw TargetFailure("fault run: the engine served no call for 30 s (its last failure: " +
                            report.last_call_error + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return std::nullopt;
    }
  };
  auto member = [](int k) { return "c" + std::to_string(k + 1); };
  // Polls as member and answers each message: ack (always when `drain`), else mostly ack,
  // sometimes nack, sometimes leave it to time out. Returns how many it was handed.
  bool last_poll_failed = false;  // the engine failed the last poll (the drain goes on)
  auto poll = [&](int k, std::size_t max, bool drain) -> std::size_t {
    const std::optional<oplang::Outcome> o = call(oplang::Poll{kTopic, kSub, member(k), max});
    last_poll_failed = !o || o->error;
    if (!o) {
      FaultEvent e;
      e.kind = FaultEvent::Kind::kPollFailed;
      e.consumer = member(k);
      e.at_ms = ms_since(start);
      e.epoch = call_epoch;
      report.history.push_back(e);
      return 0;
    }
    if (o->error) {  // answered, and refused: said in the report as the engine's last word
      report.last_call_error = std::string("a poll refused with ") + model::to_string(*o->error);
      return 0;
    }
    const auto* got = std::get_if<std::vector<model::Received>>(&o->value);
    if (got == nullptr) return 0;
    ++poll_number;
    for (const model::Received& m : *got) {
      FaultEvent e;
      e.kind = FaultEvent::Kind::kDeliver;
      e.value = m.payload;
      e.consumer = member(k);
      e.id = std::to_string(m.offset);
      e.poll = poll_number;
      e.attempt = m.attempt;
      e.at_ms = ms_since(start);
      e.epoch = call_epoch;
      report.history.push_back(e);
      ++report.delivered;
    }
    for (const model::Received& m : *got) {
      const unsigned roll = static_cast<unsigned>(rng() % 10);
      if (drain || roll < 8) {
        oplang::Ack ack;
        ack.topic = kTopic;
        ack.sub = kSub;
        ack.offset = m.offset;
        ack.member = member(k);
        const std::optional<oplang::Outcome> a = call(ack);
        FaultEvent e;
        if (!a) {  // it may or may not have happened
          e.kind = FaultEvent::Kind::kAckFailed;
          e.value = m.payload;
          e.consumer = member(k);
          e.id = std::to_string(m.offset);
          e.at_ms = ms_since(start);
          e.epoch = call_epoch;
          report.history.push_back(e);
          continue;
        }
        e.kind = FaultEvent::Kind::kAck;
        e.value = m.payload;
        e.consumer = member(k);
        e.id = std::to_string(m.offset);
        e.accepted = !a->error && oplang::accepted(a->value).value_or(false);
        if (e.accepted) ++report.acks_accepted;
        e.at_ms = ms_since(start);
        e.epoch = call_epoch;
        report.history.push_back(e);
      } else if (roll == 8) {
        oplang::Nack nack;
        nack.topic = kTopic;
        nack.sub = kSub;
        nack.offset = m.offset;
        nack.member = member(k);
        (void)call(nack);
      }
    }
    return got->size();
  };

  // Seconds in which the consumers rest (about one in three, drawn from the seed), so a
  // fault finds messages published and not yet handed out, not only ones in flight.
  std::vector<bool> resting;
  {
    std::mt19937_64 rest_rng(options.seed * 0x9E3779B97F4A7C15ULL + 29);
    for (double t = 0; t < options.seconds + 1; t += 1) resting.push_back(rest_rng() % 3 == 0);
  }
  double next_progress = 5;
  while (since(start) < options.seconds && !done) {
    if (stop()) throw TargetFailure("fault run: interrupted");
    const auto second = static_cast<std::size_t>(since(start));
    if (rng() % 2 == 0 || (second < resting.size() && resting[second])) {
      const std::string value = "v" + std::to_string(report.published++);
      FaultEvent e;
      e.kind = FaultEvent::Kind::kPublish;
      e.value = value;
      const std::optional<oplang::Outcome> o = call(oplang::Publish{kTopic, value, {}, ""});
      // R33: a publish that met a failed write or sync is undecided (the reopen finds it
      // taken effect or not), as a call with no answer is.
      e.result = !o || o->error == model::ErrorCode::kIoError ? PublishResult::kIndeterminate
                 : o->error                                   ? PublishResult::kFailed
                                                              : PublishResult::kOk;
      (e.result == PublishResult::kOk       ? report.ok
       : e.result == PublishResult::kFailed ? report.failed
                                            : report.indeterminate)++;
      e.at_ms = ms_since(start);
      e.epoch = call_epoch;
      report.history.push_back(e);
    } else {
      (void)poll(static_cast<int>(rng() % static_cast<unsigned>(report.consumers)), 1 + rng() % 5,
                 false);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    if (options.progress && since(start) >= next_progress) {
      next_progress += 5;
      options.progress(std::to_string(static_cast<int>(since(start))) +
                       " s: " + std::to_string(report.published) + " published (" +
                       std::to_string(report.ok) + " ok, " + std::to_string(report.indeterminate) +
                       " indeterminate), " + std::to_string(report.delivered) + " delivered, " +
                       std::to_string(faults_done.load()) + "/" +
                       std::to_string(report.faults.size()) + " faults");
    }
  }
  // Every fault ends with the server started again: wait for the last one before draining.
  while (faults_done < report.faults.size() && !done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  done = true;
  if (faulter.joinable()) faulter.join();
  if (fault_error) std::rethrow_exception(fault_error);

  // The drain: past every deadline, then everything polled and acked, until quiet rounds an
  // ack timeout apart find nothing (nacked and timed-out messages come back within one); a
  // round in which the engine failed a poll is not quiet.
  if (options.progress) options.progress("faults done; draining");
  const auto drain_start = Clock::now();
  int empty_rounds = 0;
  while (empty_rounds < options.drain_quiet_rounds && Clock::now() - drain_start < kDrainBound) {
    if (stop()) throw TargetFailure("fault run: interrupted");
    std::this_thread::sleep_for(std::chrono::milliseconds(options.ack_timeout_ms + 200));
    std::size_t got = 0;
    bool failed = false;  // a round with a failed poll found nothing only as far as it saw
    for (int k = 0; k < report.consumers; ++k) {
      for (std::size_t n = 1; n > 0;) {
        n = poll(k, kDrainBatch, true);
        got += n;
        failed = failed || last_poll_failed;
        if (Clock::now() - drain_start > kDrainBound) break;
      }
    }
    empty_rounds = got == 0 && !failed ? empty_rounds + 1 : 0;
    ++report.drain_rounds;
  }
  report.drain_quiet = empty_rounds >= options.drain_quiet_rounds;
  report.anomalies = check_fault_history(
      report.history, options.durable_attempts ? AttemptsKept::kDurable : AttemptsKept::kWhileUp,
      &report.counted_after_restart);
  return report;
}

}  // namespace conformance
