// Module entry: builds the exports object from every self-registered binding file
// (binding/registry.h) and wires the per-environment state's clean-up.
#include <napi.h>

#include "binding/addon_state.h"
#include "binding/registry.h"

namespace mnemo::binding {
namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // One AddonState per environment (main thread and each worker thread load their own).
  InstallAddonState(env);
  for (const BindingEntry& entry : SortedBindings()) {
    exports = entry.init(env, exports);
  }
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

// NODE_API_MODULE pastes the init name into an identifier, so it must be unqualified.
static Napi::Object MnemoNativeInit(Napi::Env env, Napi::Object exports) {
  return mnemo::binding::Init(env, exports);
}

NODE_API_MODULE(mnemo_native, MnemoNativeInit)
