#!/usr/bin/env bash
# Builds the native C++ unit tests (mnemo_native_tests) with AddressSanitizer and
# UndefinedBehaviorSanitizer into libs/native-cuda/build-asan and runs them; any report
# fails the run. Usage: bash scripts/sanitize.sh [test-name-substring]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pkg="$root/libs/native-cuda"
build="$pkg/build-asan"
jobs="${MNEMO_BUILD_JOBS:-2}"
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -g -O1"
# NOTE: CUDA stays on when nvcc exists, so the sanitised binary exercises the real runtime
# probe; the CUDA runtime maps memory in the region ASan reserves as shadow gap, hence
# protect_shadow_gap=0. MNEMO_DISABLE_CUDA=1 builds without it.
cuda=ON
[[ "${MNEMO_DISABLE_CUDA:-0}" == 1 ]] && cuda=OFF
uring=ON
[[ "${MNEMO_DISABLE_URING:-0}" == 1 ]] && uring=OFF

# Ninja when present (see test-native.mjs); an existing folder keeps its generator.
generator=()
if command -v ninja >/dev/null && [[ ! -f "$build/CMakeCache.txt" ]]; then generator=(-G Ninja); fi

cmake "${generator[@]}" -S "$pkg" -B "$build" \
  -DCMAKE_BUILD_TYPE=Debug \
  -DMNEMO_BUILD_TESTS=ON -DMNEMO_BUILD_ADDON=OFF -DMNEMO_ENABLE_CUDA="$cuda" -DMNEMO_ENABLE_URING="$uring" \
  -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$build" --target mnemo_native_tests --parallel "$jobs"

# allocator_may_return_null: the out-of-memory test asks for SIZE_MAX/2 bytes on purpose.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:protect_shadow_gap=0:abort_on_error=0:halt_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
"$build/mnemo_native_tests" "$@"
