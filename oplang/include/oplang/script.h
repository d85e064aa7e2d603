// Scripted push handlers, in the operation language's words: the model's handler scripts
// (model/handler_script.h), which a Subscribe carries and every runner plays.
#pragma once

#include "model/handler_script.h"

namespace oplang {
using model::effect_result;
using model::EffectKind;
using model::end_with;
using model::Step;
using model::Verdict;
/// A handler's behaviour: one Step per offer, then `confirm` forever.
using HandlerScript = model::Script;
}  // namespace oplang
