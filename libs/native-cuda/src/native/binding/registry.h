// Self-registration of binding files, so that adding a binding never edits addon.cc.
//
// Each src/native/binding/*.cc ends with
//   MNEMO_REGISTER_BINDING(host_pool, InitHostPool);
// where `Napi::Object InitHostPool(Napi::Env env, Napi::Object exports)` adds what it exports to
// `exports` (and returns it), or, for a binding that only exports functions, inside its namespace
//   MNEMO_REGISTER_FUNCTIONS(copy, {"batchCopy", BatchCopy}); addon.cc calls every registered init in name order, so the
// module's shape does not depend on static-initialisation order across files.
//
// Ownership: entries hold plain function pointers to functions with static storage;
// nothing is allocated per entry beyond the vector slot.
#pragma once

#include <napi.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace mnemo::binding {

using InitFn = Napi::Object (*)(Napi::Env env, Napi::Object exports);

struct BindingEntry {
  const char* name;
  InitFn init;
};

// Function-local static: safe to use from other files' static initialisers.
inline std::vector<BindingEntry>& Registry() {
  static std::vector<BindingEntry> entries;
  return entries;
}

struct BindingRegistrar {
  BindingRegistrar(const char* name, InitFn init) { Registry().push_back({name, init}); }
};

// Registered entries sorted by name (deterministic init order).
inline std::vector<BindingEntry> SortedBindings() {
  std::vector<BindingEntry> sorted = Registry();
  std::sort(sorted.begin(), sorted.end(), [](const BindingEntry& a, const BindingEntry& b) {
    return std::strcmp(a.name, b.name) < 0;
  });
  return sorted;
}

struct ExportedFunction {
  const char* name;
  Napi::Function::Callback fn;
};

// Sets each function on `target` under its name, which is also the JS function's `name`
// (what stack traces show), so the two can never disagree.
inline void SetFunctions(Napi::Env env, Napi::Object target, std::initializer_list<ExportedFunction> fns) {
  for (const ExportedFunction& f : fns) target.Set(f.name, Napi::Function::New(env, f.fn, f.name));
}

}  // namespace mnemo::binding

#define MNEMO_REGISTER_BINDING(name, initFn)                                        \
  static ::mnemo::binding::BindingRegistrar mnemo_binding_registrar_##name( \
      #name, initFn)

// A binding whose init only sets functions on `exports`: `...` lists {name, callback} pairs.
#define MNEMO_REGISTER_FUNCTIONS(name, ...)                                                        \
  static ::mnemo::binding::BindingRegistrar mnemo_binding_registrar_##name(                        \
      #name, [](Napi::Env env, Napi::Object exports) {                                             \
        ::mnemo::binding::SetFunctions(env, exports, {__VA_ARGS__});                               \
        return exports;                                                                            \
      })
