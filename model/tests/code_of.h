// Test helper: the model error a call throws.
#pragma once

#include <gtest/gtest.h>

#include "model/errors.h"

namespace model {

/// The code of the model::Error that call throws; a test failure (and kNotSynchronous, which
/// no tested call throws) if it throws none.
inline ErrorCode code_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no error";
  return ErrorCode::kNotSynchronous;
}

}  // namespace model
