// Kernel precondition checks. The TypeScript wrapper validates every argument and throws a
// precise RangeError first, so a failing check here is a bug in the caller: abort loudly
// rather than corrupt memory.
#pragma once

#include <cstdio>
#include <cstdlib>

#define MNEMO_KERNEL_CHECK(cond)                                                             \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "mnemo kernel check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)
