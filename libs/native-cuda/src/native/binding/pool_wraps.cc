#include "binding/pool_wraps.h"

namespace mnemo::binding {

const napi_type_tag kHostPoolTag = {0x6d6e656d6f2d6870ull, 0x9c1f2a4b77d05e31ull};
const napi_type_tag kSsdPoolTag = {0x6d6e656d6f2d7373ull, 0x3e8b61c0d4a2f917ull};

PoolObject ResolvePoolObject(Napi::Value value) {
  PoolObject out;
  if (!value.IsObject()) return out;
  Napi::Object obj = value.As<Napi::Object>();
  if (obj.CheckTypeTag(&kHostPoolTag)) {
    out.kind = PoolObjectKind::kHost;
    out.host = HostPoolWrap::Unwrap(obj)->pool();
  } else if (obj.CheckTypeTag(&kSsdPoolTag)) {
    out.kind = PoolObjectKind::kSsd;
    const std::shared_ptr<SsdDevice>& device = SsdPoolWrap::Unwrap(obj)->device();
    if (device && !device->closing()) out.ssd = device;
  }
  return out;
}

}  // namespace mnemo::binding
