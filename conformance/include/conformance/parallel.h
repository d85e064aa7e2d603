// Parallel runs of the kit: concurrent pull workers on any target with workers
// (Target::worker), their history judged by the fiber suite's Wing-Gong linearizability
// checker (properties/fiber/linearizability.h) against the model under the target's
// profile. A program is the operation language's concurrent form (oplang/program.h): setup
// ops in order, then one fiber per worker, each its own client of the engine.
//
// Timing on a real-time engine: every fiber call happens at the model time the setup ended
// (no fiber advances), and the run is void unless the fibers finish more than `margin`
// before the first ack deadline; the settle suffix then waits until every deadline has
// passed, on the engine's clock too, by `margin`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "conformance/profile.h"
#include "conformance/runner.h"
#include "conformance/target.h"
#include "conformance/timeline_page.h"
#include "linearizability.h"
#include "oplang/program.h"

namespace conformance {

/// How parallel programs are made and judged (model ms).
struct ParallelOptions {
  model::Millis ack_timeout = 50;  // long: every fiber call lands well before a deadline
  model::Millis margin = 5;
  std::size_t max_publishes = 5;
  std::size_t min_fibers = 2, max_fibers = 3;
  std::size_t max_ops = 4;  // per fiber
};

/// A random program from seed: setup `create_topic t`, `subscribe_pull t p0` (ack timeout,
/// max deliveries 0 or 3, from the beginning) and 1..max_publishes publishes; then fibers
/// w0.. whose ops (member m<i>) poll 1-2 messages, ack or nack the oldest in hand, or ack an
/// offset that may be anyone's.
oplang::Program generate_parallel(std::uint64_t seed, const ParallelOptions& options);

/// What one parallel run showed.
struct ParallelVerdict {
  bool linearizable = true;
  /// The fibers took so long that a deadline may have come: the run says nothing.
  bool void_run = false;
  std::size_t calls = 0;  // every recorded call, settle suffix included
  /// Switches the run needed (kConcurrentPollsInterleave: only with each worker's polls
  /// split into one-message polls did the history linearize).
  std::vector<Switch> needed;
  /// The history and, when not linearizable, the longest matching order and what the
  /// model expected next (fiberprop::describe).
  std::string report;
  /// The queue checkers' findings on the same history (fiberprop::check_offsets and
  /// check_pull, properties/fiber/history.h): "" or "<anomaly>: details" lines, Jepsen's
  /// names (lost, unexpected, duplicated-beyond-redelivery, nonmonotonic, double-held,
  /// acked-came-back, poll-skip; counters where the engine keeps R13's).
  std::string anomalies;
  /// The run as bars (a row per worker, "client" for setup and settle), the calls the
  /// checker could not place in red.
  std::vector<TimedStep> timeline;
  /// A judged run that does not linearize or shows an anomaly.
  [[nodiscard]] bool failed() const { return !void_run && (!linearizable || !anomalies.empty()); }
};

/// The history as an engine whose concurrent polls share messages one by one
/// (kConcurrentPollsInterleave) makes it: each poll of k messages (not of branch `keep`)
/// becomes k one-message polls over the same interval, plus an empty one if it came back
/// short of its max (at some point in it nothing was left).
fiberprop::ParallelHistory split_polls(const fiberprop::ParallelHistory& h, int keep);

/// Runs program on target: setup on the target, each fiber on its own worker thread (a
/// fresh Target::worker), then the settle suffix on the target (advance past every
/// deadline, expire, poll everything back as member m99, ack it all, poll once more), then
/// reads p0's dead letters (and stats, where the target keeps them); judges the whole
/// history for linearizability and with the queue checkers. Throws TargetFailure (the engine
/// failed) and std::invalid_argument (the target has no workers, or an op outside the pull subset).
ParallelVerdict check_parallel(Target& target, const oplang::Program& program, const Profile& p,
                               const ParallelOptions& options);

/// Removes fiber ops, fibers and publishes while the program still fails on fresh targets
/// (a candidate counts if one of `tries` runs failed()), for at most `trials`
/// candidates. Returns the smallest failing program found.
oplang::Program shrink_parallel(const TargetFactory& factory, oplang::Program program,
                                const Profile& p, const ParallelOptions& options, int tries,
                                int trials);

}  // namespace conformance
