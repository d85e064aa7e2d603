// Texts of scripted side-effect results, and how a scripted handler ends.
#include "model/handler_script.h"

#include <stdexcept>

namespace model {

std::string effect_result(EffectKind kind, const std::string& result) {
  const char* name = "";
  switch (kind) {
    case EffectKind::kNone:
      return "";
    case EffectKind::kUnsubscribeSelf:
    case EffectKind::kUnsubscribe:
      name = "unsubscribe";
      break;
    case EffectKind::kPublish:
      name = "publish";
      break;
    case EffectKind::kSeek:
      name = "seek";
      break;
    case EffectKind::kDrain:
      name = "drain";
      break;
    case EffectKind::kStall:
      name = "stall";
      break;
  }
  return std::string(name) + " -> " + result;
}

const char* failure_reason(Verdict verdict) {
  switch (verdict) {
    case Verdict::kConfirm:
      return "";
    case Verdict::kReject:
      return "rejected";
    case Verdict::kThrowStd:
      return "exception: boom";
    case Verdict::kThrowOther:
      return "unknown exception";
    case Verdict::kTerminate:
      return "terminated";
  }
  return "";
}

bool end_with(Verdict verdict) {
  switch (verdict) {
    case Verdict::kConfirm:
      return true;
    case Verdict::kReject:
      return false;
    case Verdict::kThrowStd:
      throw std::runtime_error("boom");
    case Verdict::kThrowOther:
      throw 42;
    case Verdict::kTerminate:
      throw std::logic_error("end_with(kTerminate): use end_with<the engine's Terminate>");
  }
  return true;
}

}  // namespace model
