// Version of the native library; bumped with libs/native-cuda/package.json.
#pragma once

namespace mnemo {

inline constexpr const char* kNativeVersion = "0.1.0";
// Bumped whenever the JS ↔ native calling convention changes; the TS wrapper refuses a
// binary whose ABI it does not know (stale build/Release after a pull).
inline constexpr int kNativeAbi = 3;

}  // namespace mnemo
