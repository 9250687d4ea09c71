'use strict';
// Preloaded (NODE_OPTIONS=--require) into every node of the arm64 stage
// (scripts/test-stages.mjs), which runs Node's arm64 binary under qemu-user:
// without a binfmt_misc handler (a kernel-wide setting this stage does not
// make) the kernel cannot exec an arm64 binary, so process.execPath, which the
// tests and vitest use to start child processes, is pointed at a script that
// runs the same binary under qemu.
if (process.env.HOTSPAN_EMULATED_NODE) process.execPath = process.env.HOTSPAN_EMULATED_NODE;
