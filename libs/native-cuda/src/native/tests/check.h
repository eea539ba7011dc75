// A tiny test harness for the native unit tests (mnemo_native_tests); no dependencies.
//
//   #include "tests/check.h"
//   MNEMO_TEST(copy_engine, copies_many_ranges) {
//     CHECK(ok);
//     CHECK_EQ(a, b);
//     CHECK_NEAR(x, y, 1e-5);
//     if (!have_gpu) SKIP("no CUDA device");
//   }
//
// A failing CHECK throws, which ends the current test and counts it failed; the next test
// runs. tests/main.cc runs every registered test (optionally filtered by a substring given
// as argv[1]) and prints "N passed, N failed, N skipped"; it exits non-zero on any failure.
#pragma once

#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <type_traits>
#include <string>
#include <vector>

namespace mnemo::test {

struct TestCase {
  std::string name;  // "suite.name"
  std::function<void()> fn;
};

inline std::vector<TestCase>& Tests() {
  static std::vector<TestCase> tests;
  return tests;
}

struct Registrar {
  Registrar(const char* suite, const char* name, std::function<void()> fn) {
    Tests().push_back({std::string(suite) + "." + name, std::move(fn)});
  }
};

// Thrown by a failed CHECK; caught by the runner.
struct Failure {
  std::string message;
};

// Thrown by SKIP; caught by the runner.
struct Skipped {
  std::string reason;
};

template <typename T>
std::string Show(const T& v) {
  std::ostringstream os;
  if constexpr (std::is_pointer_v<T>) {
    os << static_cast<const void*>(v);
  } else if constexpr (std::is_enum_v<T>) {
    os << static_cast<long long>(v);
  } else if constexpr (std::is_same_v<T, unsigned char> || std::is_same_v<T, signed char>) {
    os << static_cast<int>(v);
  } else {
    os << v;
  }
  return os.str();
}

[[noreturn]] inline void Fail(const char* file, int line, const std::string& what) {
  std::ostringstream os;
  os << file << ":" << line << ": " << what;
  throw Failure{os.str()};
}

// Runs all tests whose name contains `filter`; returns the number of failures.
inline int RunAll(const std::string& filter) {
  int passed = 0, failed = 0, skipped = 0;
  for (const TestCase& t : Tests()) {
    if (!filter.empty() && t.name.find(filter) == std::string::npos) continue;
    try {
      t.fn();
      ++passed;
      std::printf("PASS %s\n", t.name.c_str());
    } catch (const Skipped& s) {
      ++skipped;
      std::printf("SKIP %s: %s\n", t.name.c_str(), s.reason.c_str());
    } catch (const Failure& f) {
      ++failed;
      std::printf("FAIL %s\n  %s\n", t.name.c_str(), f.message.c_str());
    } catch (const std::exception& e) {
      ++failed;
      std::printf("FAIL %s\n  unexpected exception: %s\n", t.name.c_str(), e.what());
    } catch (...) {
      ++failed;
      std::printf("FAIL %s\n  unexpected non-standard exception\n", t.name.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed;
}

}  // namespace mnemo::test

#define MNEMO_TEST_CONCAT_(a, b) a##b
#define MNEMO_TEST_CONCAT(a, b) MNEMO_TEST_CONCAT_(a, b)

// Defines and registers a test function `suite.name`.
#define MNEMO_TEST(suite, name)                                                      \
  static void mnemo_test_##suite##_##name();                                         \
  static ::mnemo::test::Registrar MNEMO_TEST_CONCAT(mnemo_test_registrar_, __LINE__)( \
      #suite, #name, &mnemo_test_##suite##_##name);                                  \
  static void mnemo_test_##suite##_##name()

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) ::mnemo::test::Fail(__FILE__, __LINE__, "CHECK(" #cond ") failed"); \
  } while (0)

#define CHECK_EQ(a, b)                                                             \
  do {                                                                             \
    const auto& mnemo_a_ = (a);                                                    \
    const auto& mnemo_b_ = (b);                                                    \
    if (!(mnemo_a_ == mnemo_b_))                                                   \
      ::mnemo::test::Fail(__FILE__, __LINE__,                                      \
                          "CHECK_EQ(" #a ", " #b ") failed: " +                    \
                              ::mnemo::test::Show(mnemo_a_) + " vs " +             \
                              ::mnemo::test::Show(mnemo_b_));                      \
  } while (0)

#define CHECK_NE(a, b)                                                             \
  do {                                                                             \
    const auto& mnemo_a_ = (a);                                                    \
    const auto& mnemo_b_ = (b);                                                    \
    if (mnemo_a_ == mnemo_b_)                                                      \
      ::mnemo::test::Fail(__FILE__, __LINE__,                                      \
                          "CHECK_NE(" #a ", " #b ") failed: both " +               \
                              ::mnemo::test::Show(mnemo_a_));                      \
  } while (0)

// |a - b| <= tol, for floating point values; NaN never passes.
#define CHECK_NEAR(a, b, tol)                                                      \
  do {                                                                             \
    const double mnemo_a_ = static_cast<double>(a);                                \
    const double mnemo_b_ = static_cast<double>(b);                                \
    const double mnemo_t_ = static_cast<double>(tol);                              \
    if (!(std::fabs(mnemo_a_ - mnemo_b_) <= mnemo_t_))                             \
      ::mnemo::test::Fail(__FILE__, __LINE__,                                      \
                          "CHECK_NEAR(" #a ", " #b ", " #tol ") failed: " +        \
                              ::mnemo::test::Show(mnemo_a_) + " vs " +             \
                              ::mnemo::test::Show(mnemo_b_));                      \
  } while (0)

// Ends the current test as skipped, e.g. GPU cases on a machine without a device.
#define SKIP(reason) throw ::mnemo::test::Skipped{std::string(reason)}
