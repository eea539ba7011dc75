// Status to exception for the check harness: a failed CUDA call ends the case it belongs to,
// and the harness reports that case as failed rather than reading garbage further on.
#pragma once

#include <stdexcept>
#include <string>

#include "core/status.h"

namespace mnemo::check {

inline void Must(const Status& st, const char* what) {
  if (!st.ok()) throw std::runtime_error(std::string(what) + ": " + st.ToString());
}

}  // namespace mnemo::check
