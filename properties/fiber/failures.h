// The anomaly lines a concurrent checker reports ("<anomaly>: details"), at most three per
// anomaly so one broken rule does not bury the others. Shared by history.cpp and timing.cpp.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace fiberprop {

/// Collects "<name>: ..." lines; add(name) returns the stream to write the details to (a
/// sink after the third line of that name).
class Failures {
 public:
  std::ostringstream& add(const char* name) {
    if (++count_[name] <= 3) {
      out_ << name << ": ";
      return out_;
    }
    return sink_;
  }
  std::string str() const { return out_.str(); }

 private:
  std::map<std::string, int> count_;
  std::ostringstream out_, sink_;
};

}  // namespace fiberprop
