// Uniform draws for generators' choices. RapidCheck's gen::inRange scales its range with the
// size (below size 50, inRange(0, 2) is always 0; below 7, inRange(0, 8) is), so a coin
// toss written with it is a constant in the small half of the cases: half the sequences
// never publish through a Publisher, never pick a known topic, never fail a member. A
// choice's odds must not depend on the size; how long a sequence is may, and does.
#pragma once

#include <rapidcheck.h>

namespace props {

/// A value drawn uniformly from [lo, hi) at every size; shrinks toward lo. Throws
/// rc::GenerationFailure (RapidCheck discards the case) when hi <= lo.
template <class T>
rc::Gen<T> uniform_in(T lo, T hi) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(lo, hi));
}

/// Inside a generator or property: true once in n draws, at every size.
inline bool one_in(int n) { return *uniform_in(0, n) == 0; }

}  // namespace props
