// One JSON object per line on stdout: the harness's only output format, read by
// summarize.mjs. Keys are added in order; strings are escaped; non-finite numbers become null.
#pragma once

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace mnemo::check {

class JsonLine {
 public:
  JsonLine& Str(const std::string& key, const std::string& v) {
    Key(key);
    os_ << '"';
    for (char c : v) {
      if (c == '"' || c == '\\') os_ << '\\' << c;
      else if (static_cast<unsigned char>(c) < 0x20) os_ << ' ';
      else os_ << c;
    }
    os_ << '"';
    return *this;
  }
  JsonLine& Num(const std::string& key, double v) {
    Key(key);
    if (std::isfinite(v)) os_ << v;
    else os_ << "null";
    return *this;
  }
  JsonLine& Bool(const std::string& key, bool v) {
    Key(key);
    os_ << (v ? "true" : "false");
    return *this;
  }
  void Print() {
    std::printf("{%s}\n", os_.str().c_str());
    std::fflush(stdout);
  }

 private:
  void Key(const std::string& k) {
    if (!first_) os_ << ',';
    first_ = false;
    os_ << '"' << k << "\":";
  }
  std::ostringstream os_;
  bool first_ = true;
};

}  // namespace mnemo::check
