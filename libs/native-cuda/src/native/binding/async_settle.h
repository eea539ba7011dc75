// Runs one piece of native work on a TaskQueue and settles a Promise with its Status on the
// JS thread (the batchCopy pattern, for any work): the JS objects the work reads or writes
// are referenced until it settles, and environment teardown waits for work in flight.
#pragma once

#include <napi.h>

#include <functional>
#include <vector>

#include "core/status.h"
#include "core/task_queue.h"

namespace mnemo::binding {

// `keep`: JS objects (typed arrays, buffers) whose memory `work` uses. `work` runs on a queue
// thread and must not touch JS values. Returns the Promise; a queue that is shut down
// rejects it with 'closed' without running `work`.
Napi::Promise SettleOnQueue(Napi::Env env, TaskQueue& queue, const char* name, std::vector<Napi::Object> keep,
                            std::function<Status()> work);

}  // namespace mnemo::binding
