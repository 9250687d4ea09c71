// Branch and inlining hints shared by the hot path and its callers.
#pragma once

#define HOTSPAN_UNLIKELY(x) __builtin_expect(!!(x), 0)
// The hot path is inlined into its callers (the binding's begin/end, the C
// ABI); its slow paths are kept out of line and out of the hot code's way.
#define HOTSPAN_HOT_INLINE inline __attribute__((always_inline))
#define HOTSPAN_COLD __attribute__((noinline, cold))
// Out of line but not cold: for a rare call on a path that is itself hot.
// GCC treats every branch that may reach a cold function as unlikely, which
// moved a holder's whole commit (and an out-of-line commit_owner call) into
// the cold section on every span.
#define HOTSPAN_OUTLINE __attribute__((noinline))
