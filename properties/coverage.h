// Counts, across every sequence a process runs, how often each op kind was a step and how
// many sequences reached each contract state: the evidence that generators hit corners.
#pragma once

#include <map>
#include <string>

namespace props {

/// Process-wide tallies. Not thread-safe: RapidCheck runs test cases one at a time.
struct Coverage {
  std::map<std::string, long> steps_by_kind;
  std::map<std::string, long> sequences_reaching;
  std::map<std::string, long> sequences_pairing;  // option pairs exercised (option_pairs.h)
  long steps = 0;
  long sequences = 0;
  long swarm_sequences = 0;  // sequences that turned some command kinds off (state_machine.h)
  long keyed_publishes = 0;  // publish steps with a key
  long keyed_high = 0;       // of them, keys with a byte >= 0x80

  static Coverage& get();
  void reset() { *this = Coverage{}; }
};

}  // namespace props
