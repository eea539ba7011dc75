// A private temporary folder for tests that need files (SSD pool files, fake sysfs trees);
// removed with everything in it when the object goes out of scope.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/check.h"

namespace mnemo::test {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/mnemo-native-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) Fail(__FILE__, __LINE__, "mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace mnemo::test
