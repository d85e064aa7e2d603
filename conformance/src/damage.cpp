// Damage at rest (conformance/damage.h).
#include "conformance/damage.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace conformance {

std::string damage_at_rest(const std::string& dir, std::uint64_t where) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file() && it->file_size(size_ec) > 0 && !size_ec)
      files.push_back(it->path());
  }
  if (files.empty()) return "nothing to damage";
  std::sort(files.begin(), files.end());
  const fs::path& file = files[where % files.size()];
  where /= files.size();
  const std::uint64_t size = fs::file_size(file);
  const std::string name = fs::relative(file, dir).string();
  if (where % 4 == 0) {
    const std::uint64_t keep = (where / 4) % size;
    fs::resize_file(file, keep);
    return "cut " + name + " from " + std::to_string(size) + " to " + std::to_string(keep) +
           " bytes";
  }
  where /= 4;
  const std::uint64_t byte = where % size;
  const int bit = static_cast<int>((where / size) % 8);
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  char c = 0;
  f.seekg(static_cast<std::streamoff>(byte));
  f.get(c);
  c = static_cast<char>(c ^ (1 << bit));
  f.seekp(static_cast<std::streamoff>(byte));
  f.put(c);
  f.flush();
  if (!f) throw std::runtime_error("cannot damage " + file.string());
  return "flipped bit " + std::to_string(bit) + " of byte " + std::to_string(byte) + " of " + name;
}

}  // namespace conformance
