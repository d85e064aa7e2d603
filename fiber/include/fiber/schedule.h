// A schedule: the plain data that decides every scheduling choice of a fiber run.
// Drawn before the fibers start, so RapidCheck can shrink it and libFuzzer can mutate it;
// printed as text by a failing run and parsed back for an exact replay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiber {

/// How the scheduler picks the next fiber at a scheduling point.
enum class Strategy {
  // Random walk. At each point with n >= 2 runnable fibers one choice c is consumed and
  // picks candidates[c % n], where candidates are the runnable fibers in id order rotated
  // to start at the running fiber (so c == 0 means "no preemption"). Choices past the end
  // of `choices` come from `seed` (a splitmix64 stream), or are 0 when seed == 0.
  kWalk,
  // PCT (Burckhardt et al., ASPLOS 2010): every fiber gets a random priority >= d from
  // `seed`; d-1 change points are drawn uniformly from [1, k]; the highest-priority
  // runnable fiber runs, and at the i-th change point the running fiber drops to
  // priority d-i. For a program of n fibers and at most k scheduling points, each run
  // finds a given bug of depth d with probability >= 1/(n * k^(d-1)).
  kPct,
};

/// Everything that decides a run's interleaving and, under weak memory, what each load reads.
struct Schedule {
  Strategy strategy = Strategy::kWalk;
  // Weak memory (fiber/src/memory_model.h): a load may read an older store than the newest
  // where the C++ memory model allows it, and a read of plain data that is not
  // happens-after its write is a data race. Each load with more than one store to read is a
  // choice of the schedule: with `choices` (and seed), c % n picks the c-th newest (0: the
  // newest), and it counts as a preemption for the exhaustive bound; drawn from `seed` (walk
  // tail, PCT) half of them read the newest. false: every load reads the newest store and
  // plain data is not watched (sequential consistency, as before weak memory).
  bool weak = false;
  std::uint64_t seed = 0;
  std::vector<std::uint32_t> choices;  // kWalk only
  int depth = 2;                       // kPct: d (bug depth)
  std::uint32_t steps = 100;           // kPct: k (expected scheduling points per run)

  /// A walk that follows `choices`, then never preempts.
  static Schedule walk(std::vector<std::uint32_t> choices);
  /// A uniformly random walk drawn from `seed` (seed 0 is remapped to 1).
  static Schedule random(std::uint64_t seed);
  /// PCT with depth d over about k scheduling points.
  static Schedule pct(std::uint64_t seed, int d, std::uint32_t k);

  bool operator==(const Schedule&) const = default;
};

/// Text form: "walk:seed=S:choices=0,2,1" or "pct:d=3:k=200:seed=S", with ":mem=weak"
/// after the kind under weak memory ("walk:mem=weak:seed=S:choices=...").
std::string to_string(const Schedule& s);
/// Parses to_string's output; nullopt when malformed.
std::optional<Schedule> parse_schedule(std::string_view text);
/// The schedule in environment variable FIBER_SCHEDULE, if set. Aborts if malformed.
std::optional<Schedule> schedule_from_env();

/// splitmix64: the only random source of the scheduler (portable, seedable).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

}  // namespace fiber
