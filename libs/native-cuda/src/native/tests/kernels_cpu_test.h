// The CPU kernel tests' common scope: the kernels as kc:: and the shared test helpers
// unqualified, declared once here rather than at the top of every test file.
#pragma once

#include "kernels/cpu/cpu_kernels.h"
#include "tests/kernels_test_util.h"

namespace kc = mnemo::kernels::cpu;
using mnemo::test::BitEqual;
using mnemo::test::Guarded;
using mnemo::test::Label;
using mnemo::test::MaxAbsDiff;
using mnemo::test::Rng;
