// Finishing traces when the process ends: on normal exit and process.exit()
// (the 'exit' event, where only synchronous work runs), and on SIGINT and
// SIGTERM. Each action is synchronous (atExit): a tracer's trace written by
// the backend on this thread (the native backend streams it in blocks, in
// bounded memory: Backend.writeFileNow; hotspan/auto's file the same way,
// lib/auto/auto-file.ts), or a stream drained and its file finished by the
// stream's thread while this one waits.
//
// The program's own behaviour is kept: a signal is handled only when no
// listener of the program's is installed for it (the program then decides,
// and its exit reaches the 'exit' event); otherwise the traces are written and
// the signal is raised again with the default action, so the exit status is
// the one the signal gives. Errors are never caught here, and a failed write
// only prints a warning.

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

interface Pending {
  /** Runs once; a thrown error is printed, never rethrown. */
  run: () => void;
  /** What it finishes, for the message when it fails. */
  what: string;
  done: boolean;
}

const pending = new Set<Pending>();
let installed = false;

function writeAll(): void {
  for (const p of pending) {
    if (p.done) continue;
    p.done = true;
    try {
      p.run();
    } catch (e) {
      process.stderr.write(`hotspan: could not write ${p.what} at exit: ${(e as Error).message}\n`);
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  // Only our listeners: the default action (terminate) is what the program would have had.
  const others = process.listeners(signal).filter((l) => l !== signalHandlers[signal]);
  if (others.length > 0) return;
  writeAll();
  uninstall();
  process.kill(process.pid, signal);
}

const signalHandlers: Record<string, (signal: NodeJS.Signals) => void> = {};
for (const s of SIGNALS) signalHandlers[s] = onSignal;

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', writeAll);
  for (const s of SIGNALS) process.on(s, signalHandlers[s]);
}

function uninstall(): void {
  installed = false;
  process.removeListener('exit', writeAll);
  for (const s of SIGNALS) process.removeListener(s, signalHandlers[s]);
}

/** Runs `run` when the process ends (once). Returns a function that cancels it. */
export function atExit(what: string, run: () => void): () => void {
  const p: Pending = { run, what, done: false };
  pending.add(p);
  install();
  return () => {
    pending.delete(p);
    if (pending.size === 0) uninstall();
  };
}
