#include "coverage.h"

namespace props {

Coverage& Coverage::get() {
  static Coverage coverage;
  return coverage;
}

}  // namespace props
