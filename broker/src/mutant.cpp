#include "mutant.h"

#if defined(BROKER_MUTANTS)
#include <cstdlib>
#include <cstring>

namespace broker {

bool mutant_active(const char* name) {
  static const char* const active = std::getenv("BROKER_MUTANT");
  return active != nullptr && std::strcmp(active, name) == 0;
}

}  // namespace broker
#endif
