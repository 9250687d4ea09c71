// Branch and inlining hints shared by the hot path and its callers.
#pragma once

#define HOTSPAN_UNLIKELY(x) __builtin_expect(!!(x), 0)
// The hot path is inlined into its callers (the binding's begin/end, the C
// ABI); its slow paths are kept out of line and out of the hot code's way.
#define HOTSPAN_HOT_INLINE inline __attribute__((always_inline))
#define HOTSPAN_COLD __attribute__((noinline, cold))
