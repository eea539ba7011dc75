// Entry point of mnemo_native_tests: runs every MNEMO_TEST linked into the binary.
// Usage: mnemo_native_tests [name-substring]
#include <string>

#include "tests/check.h"

int main(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  return ::mnemo::test::RunAll(filter) == 0 ? 0 : 1;
}
