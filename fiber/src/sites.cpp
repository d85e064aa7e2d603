// The registry of memory-order sites (see sites.h).
#include "sites.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

namespace fiber::detail {

namespace {

const char* name_of(std::memory_order o) {
  switch (o) {
    case std::memory_order_relaxed:
      return "relaxed";
    case std::memory_order_consume:
      return "consume";
    case std::memory_order_acquire:
      return "acquire";
    case std::memory_order_release:
      return "release";
    case std::memory_order_acq_rel:
      return "acq_rel";
    case std::memory_order_seq_cst:
      return "seq_cst";
  }
  return "?";
}

// A site's name: its file from the first "broker/" folder on (the same in any checkout and
// under ccache's relative paths), and line.
std::string site_name(const char* file, unsigned line) {
  std::string f(file);
  if (f.rfind("broker/", 0) != 0) {
    const std::size_t at = f.find("/broker/");
    if (at != std::string::npos) f = f.substr(at + 1);
  }
  return f + ":" + std::to_string(line);
}

class Registry {
 public:
  ~Registry() {
    const char* path = std::getenv("FIBER_SITES");
    if (path == nullptr || *path == '\0') return;
    std::ofstream out(path, std::ios::app);
    for (const auto& [site, order] : met_) out << site << " " << order << "\n";
  }
  std::memory_order order_at(std::memory_order written, const char* file, unsigned line) {
    std::string site = site_name(file, line);
    std::lock_guard<std::mutex> lock(mu_);
    met_.try_emplace(site, name_of(written));
    if (site == weakened_) return std::memory_order_relaxed;
    return written;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> met_;
  const std::string weakened_ = std::getenv("FIBER_WEAKEN") ? std::getenv("FIBER_WEAKEN") : "";
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::memory_order order_at_site(std::memory_order written, const char* file, unsigned line) {
  return registry().order_at(written, file, line);
}

}  // namespace fiber::detail
