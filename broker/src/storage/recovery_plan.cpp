#include "recovery_plan.h"

namespace broker::storage {

void RecoveryPlan::apply(FileSystem& fs) const {
  for (const Cut& c : cuts) {
    if (c.remove) {
      fs.remove(c.path);
    } else {
      fs.truncate(c.path, c.keep);
      fs.sync(c.path);
    }
    fs.sync_dir(c.path.substr(0, c.path.rfind('/')));
  }
}

}  // namespace broker::storage
