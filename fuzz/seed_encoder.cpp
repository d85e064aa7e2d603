// Turns example scripts into seed inputs for ops_fuzzer: seed_encoder OUT_DIR SCRIPT...
// writes OUT_DIR/<script stem> holding encode_ops(parse(script)). Run by
// scripts/fuzz-seeds; the results are committed under fuzz/corpus/ops/.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "oplang/byte_decoder.h"
#include "oplang/text.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: seed_encoder OUT_DIR SCRIPT...\n");
    return 2;
  }
  const std::filesystem::path out(argv[1]);
  std::filesystem::create_directories(out);
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i]);
    std::stringstream text;
    text << in.rdbuf();
    try {
      const auto bytes = fuzzing::encode_ops(oplang::parse(text.str()));
      std::ofstream file(out / std::filesystem::path(argv[i]).stem(), std::ios::binary);
      file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
      std::printf("%s: %zu bytes\n", argv[i], bytes.size());
    } catch (const oplang::ParseError& e) {
      std::fprintf(stderr, "%s:%zu:%zu: expected %s\n", argv[i], e.line(), e.column(),
                   e.expected().c_str());
      return 2;
    }
  }
  return 0;
}
