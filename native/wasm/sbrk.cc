// sbrk for wasi-libc's malloc, growing the memory geometrically: by its
// size (doubling it) up to 64 MiB steps, then in 64 MiB steps. wasi-libc's
// own grows it by exactly what malloc asks (a page or a few at a time), and a
// memory.grow costs 1.5-2 ms in V8 here: a recorder taking a chunk per few
// hundred spans spent most of its time growing. Doubling first keeps a small
// instance small (wasm-core.ts keeps an instance only below 16 MiB). The
// break is kept here, so memory grown ahead is handed out by later calls
// without a grow. Each move of the break is told to the host
// (hotspan.heap_end): malloc hands out memory below it, so the host's
// prefault worker (lib/binding/wasm-prefault.ts) touches the pages just above
// it before the recorder writes there.
#include <cerrno>
#include <cstdint>

extern "C" __attribute__((import_module("hotspan"), import_name("heap_end"))) void hotspan_host_heap_end(
    uint32_t brk);

namespace {
constexpr uint64_t kPage = 65536;
constexpr uint64_t kStepPages = (uint64_t{64} << 20) / kPage;
uint64_t brk = 0;  // 0: not read yet (no static constructors in a reactor)
}  // namespace

extern "C" void* sbrk(intptr_t increment) {
  const uint64_t size = static_cast<uint64_t>(__builtin_wasm_memory_size(0)) * kPage;
  if (brk == 0) brk = size;
  if (increment == 0) return reinterpret_cast<void*>(static_cast<uintptr_t>(brk));
  if (increment < 0) {  // malloc never shrinks: refused, as wasi-libc's own refuses it
    errno = ENOMEM;
    return reinterpret_cast<void*>(-1);
  }
  const uint64_t want = brk + static_cast<uint64_t>(increment);
  if (want > size) {
    const uint64_t need = (want - size + kPage - 1) / kPage;
    const uint64_t ahead = size / kPage < kStepPages ? size / kPage : kStepPages;
    const uint64_t step = need < ahead ? ahead : need;
    // The step when it fits, else just what is needed (near the 4 GiB limit).
    if (__builtin_wasm_memory_grow(0, step) == SIZE_MAX &&
        (step == need || __builtin_wasm_memory_grow(0, need) == SIZE_MAX)) {
      errno = ENOMEM;
      return reinterpret_cast<void*>(-1);
    }
  }
  const uint64_t old = brk;
  brk = want;
  hotspan_host_heap_end(static_cast<uint32_t>(brk));  // below 4 GiB: the memory's limit
  return reinterpret_cast<void*>(static_cast<uintptr_t>(old));
}
