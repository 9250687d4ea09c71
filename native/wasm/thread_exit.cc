// The C++ runtime's hook for thread_local destructors (per_thread_list.h's
// lists, the holder check's cache). Debian's thread-less wasm32 libc++abi has
// none: the module's one thread is the instance, which never exits while it
// can be called, so there is no thread exit to run them at and nothing to
// register. Their objects live as long as the instance, as statics do.
extern "C" int __cxa_thread_atexit(void (*)(void*), void*, void*) { return 0; }
