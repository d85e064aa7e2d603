// What a power cut may take from a durable program's broker (SPEC R19, R20), judged on the
// fiber runtime's virtual time, where the interval flusher's `every(ms)` is exact: a cut at
// virtual time T (the `crash` op) with the policies of the `broker ... durable` line, then
// the broker reopened on what the simulated disk kept. The rules, per checked topic and
// checked pull subscription (anomaly names as in SPEC's table):
//   - publish_sync `always`: every publish that returned before the cut began is kept, and
//     so is every message a poll handed out before it (no reader sees what a cut could take
//     back) - else `lost-synced-publish` / `lost-read-publish`;
//   - publish_sync `every(ms)`: every publish that returned at t with t + ms < T is kept
//     (the flusher ran in between; at t + ms == T the cut and the flush tie) - else
//     `lost-synced-publish`; `none`: nothing is promised;
//   - always: what was kept is a prefix of the log, each record the message published at
//     its offset - else `ghost-record` / `wrong-content`;
//   - commit_sync `always`, `every(ms)` (same windows, on the ack's return): the recovered
//     position is at least the first offset not confirmed by such an ack, unless the log
//     lost its tail (R20: then the log's end) - else `lost-synced-commit`; `none`: no bound;
//   - always: the recovered position is at most the first offset not confirmed by an ack
//     invoked before the cut (a commit is never ahead of a confirmation, R19) - else
//     `commit-ahead`;
//   - the reopen itself succeeds (a cut leaves torn tails, which recovery cuts) - else
//     `reopen-failed`.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "broker/message.h"
#include "oplang/program.h"

namespace fiberprop {

/// When the cut happened: the crash op's ticks and virtual time.
struct Cut {
  std::uint64_t invoke = 0, ret = 0;
  std::int64_t ms = 0;
};

/// One publish of a checked topic, as the run saw it.
struct DurablePublish {
  std::uint64_t ret = 0;    // tick
  std::int64_t ret_ms = 0;  // virtual time
  std::string content;      // Recorder::content of what was sent
};

/// One accepted confirmation (ack or term) of a checked pull subscription.
struct DurableConfirm {
  broker::Offset offset = 0;
  std::uint64_t invoke = 0, ret = 0;  // ticks
  std::int64_t ret_ms = 0;            // virtual time
};

/// One checked topic: what the run did, and what the reopened broker holds.
struct DurableTopic {
  std::map<broker::Offset, DurablePublish> published;
  std::set<broker::Offset> read_before_cut;  // handed out by polls returned before the cut
  std::map<std::string, std::vector<DurableConfirm>> confirms;  // by checked pull subscription
  // After the reopen:
  broker::Offset end = 0;                           // end_offset
  std::map<broker::Offset, std::string> kept;       // every record read back
  std::map<std::string, broker::Offset> positions;  // committed, by subscription
};

/// What check_cut found.
struct CutVerdict {
  std::string failures;  // "" or "<anomaly>: details" lines
  /// Evidence that the window was entered: publishes that returned before the cut and are
  /// gone, and how far the position fell below the confirmations that returned before it
  /// (or the reopened log's end, if lower; both 0 under `always`, or the checker fails).
  std::size_t publishes_taken_back = 0;
  broker::Offset position_taken_back = 0;
};

/// Judges one checked topic against the cut.
CutVerdict check_cut(const std::string& topic, const DurableTopic& t, const Cut& cut,
                     const oplang::SyncPolicy& publish_sync, const oplang::SyncPolicy& commit_sync);

}  // namespace fiberprop
