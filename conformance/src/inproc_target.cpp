#include "conformance/inproc_target.h"

#include <stdexcept>

#include "oplang/text.h"

namespace conformance {

oplang::Outcome InProcTarget::step(const oplang::Op& op) {
  if (!in_subset(op)) throw std::invalid_argument("not in the subset: " + oplang::print(op));
  return runner_.step(op);
}

}  // namespace conformance
