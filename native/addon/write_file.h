// tracer.writeFile(path, format): formats and writes the trace on a libuv
// worker thread (the JS thread only takes the snapshot) and returns a Promise
// of { bytes, spans, timelines }: the file's size and the records frozen into it.
#pragma once

#include <napi.h>

#include <string>

#include "tracer_binding.h"

namespace hotspan_addon {

Napi::Value WriteFile(const Napi::CallbackInfo& info, TracerBinding& self);

// tracer.writeFileNow(path, format): the same write on the calling thread,
// which waits for it (the exit paths, where nothing asynchronous runs). The
// file is written block by block (FileBlockWriter), so memory stays bounded
// by a few blocks whatever the trace's size. Returns { bytes, spans,
// timelines }; throws the fs-style error of FileError.
Napi::Value WriteFileNow(const Napi::CallbackInfo& info, TracerBinding& self);

// A failed file write as a Node fs-style Error (code, errno, syscall = the
// step that failed, path).
Napi::Error FileError(Napi::Env env, const std::string& path, int err, const std::string& op);

}  // namespace hotspan_addon
