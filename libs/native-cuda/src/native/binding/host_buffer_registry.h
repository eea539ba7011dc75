// Keeps allocHostBuffer memory alive while native work uses it.
//
// Why: when a Node environment exits, Node frees external ArrayBuffers (calling our
// finalizer) *before* it runs any addon clean-up hook, so a copy still running on the pool
// could write into freed memory. Each allocation is therefore shared: the ArrayBuffer's
// finalizer drops one owner, and every in-flight batch that touches the buffer holds
// another; the memory is freed when the last owner lets go.
#pragma once

#include <memory>

#include "core/host_memory.h"

namespace mnemo::binding {

// Takes ownership of `allocation`, returns the shared handle the finalizer keeps.
std::shared_ptr<HostAllocation> RegisterHostBuffer(const HostAllocation& allocation);
// Drops the registry's entry (called by the ArrayBuffer finalizer).
void UnregisterHostBuffer(const void* data);
// The allocation whose memory starts at `data`, or null if it is not one of ours.
std::shared_ptr<HostAllocation> FindHostBuffer(const void* data);

}  // namespace mnemo::binding
