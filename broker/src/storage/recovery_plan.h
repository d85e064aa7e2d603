// The changes recovery will make to disk, gathered first so a failed open changes nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "broker/file_system.h"
#include "broker/storage_options.h"

namespace broker::storage {

/// Cuts to apply once every file has been read without a typed error (SPEC R20).
struct RecoveryPlan {
  struct Cut {
    std::string path;
    std::uint64_t keep = 0;  // bytes to keep
    bool remove = false;     // remove the whole file instead
  };
  std::vector<Cut> cuts;
  std::vector<Truncation> report;

  /// Applies the cuts (truncate or remove), syncing each file and its directory.
  void apply(FileSystem& fs) const;
};

}  // namespace broker::storage
