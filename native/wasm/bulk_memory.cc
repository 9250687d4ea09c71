// memcpy, memmove and memset as single bulk-memory instructions (the build
// enables them: -mbulk-memory). Debian's wasi-libc has byte-loop versions,
// which libc++'s precompiled string code calls; a writer spends most of its
// time appending bytes.
#include <cstddef>

extern "C" {

// With bulk memory on, clang lowers these builtins to memory.copy / memory.fill
// whatever the size, so they do not call back into these functions.
void* memcpy(void* dst, const void* src, size_t n) { return __builtin_memcpy(dst, src, n); }
void* memmove(void* dst, const void* src, size_t n) { return __builtin_memmove(dst, src, n); }
void* memset(void* dst, int c, size_t n) { return __builtin_memset(dst, c, n); }

}  // extern "C"
