// Keeps allocHostBuffer memory alive while native work uses it.
//
// Why: when a Node environment exits, Node frees external ArrayBuffers (calling our
// finalizer) *before* it runs any addon clean-up hook, so a copy still running on the pool
// could write into freed memory. Each allocation is therefore shared: the registry holds one
// owner (dropped by the ArrayBuffer's finalizer or by freeHostBuffer), and every in-flight
// batch that touches the buffer holds another; the memory is freed when the last owner lets
// go. Entries carry an id because an explicit free may run long before the finalizer, by
// which time the same address can belong to a newer allocation.
#pragma once

#include <cstdint>
#include <memory>

#include "core/host_memory.h"

namespace mnemo::binding {

// Takes ownership of `allocation`; returns the id its ArrayBuffer's finalizer passes back.
uint64_t RegisterHostBuffer(const HostAllocation& allocation);
// Drops the entry for `data` if it is still allocation `id` (the ArrayBuffer finalizer).
void UnregisterHostBuffer(const void* data, uint64_t id);
// Drops the entry for `data` whatever its id (an explicit free); false when there is none.
bool ReleaseHostBuffer(const void* data);
// The allocation whose memory starts at `data`, or null if it is not a live one of ours.
std::shared_ptr<HostAllocation> FindHostBuffer(const void* data);

}  // namespace mnemo::binding
