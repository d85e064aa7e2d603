// Bytes -> an operation script (op_decoder.h) -> the reference model and the real broker
// (synchronous dispatcher) side by side. Any difference in results, errors or handler
// calls is a finding: the script and both outcomes are printed, then we abort so
// libFuzzer saves the input. Crashes, leaks and UB are findings through the sanitizers.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "harness/comparator.h"
#include "oplang/byte_decoder.h"
#include "oplang/text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const oplang::Script script = fuzzing::decode_ops(data, size);
  if (auto diff = harness::first_difference(script)) {
    std::fprintf(stderr, "ops_fuzzer: broker and model disagree\n%s\n-- script:\n%s\n",
                 harness::describe(*diff).c_str(), oplang::print(script).c_str());
    std::abort();
  }
  return 0;
}
