// Spans still open when the process exits (the one around process.exit()
// included) would be missing from the trace written at exit. Before that
// write they are ended at the exit time and flagged `abandoned`: the flag a
// span gets when its owner went away before it ended (a handle collected
// while open, a worker terminated mid-span), which every output carries
// (Chrome JSON and Perfetto `abandoned: true`, OTLP `hotspan.abandoned`).

import type { Backend } from '../backends/backend';
import { FLAG_ABANDONED, STATUS_OK } from '../common/flags';

/**
 * Ends this thread's open spans (innermost first) and the open async spans
 * of `b`, each flagged abandoned; returns how many. Groups stay open (they
 * carry no flag to say so), as do spans open on native threads and workers,
 * which only their own thread can end.
 */
export function endOpenAtExit(b: Backend): number {
  let ended = 0;
  for (let depth = b.openDepth(); depth > 0; depth--, ended++) b.endFlags(FLAG_ABANDONED);
  for (const [token] of b.openAsync()) {
    if (b.asyncEnd(token, FLAG_ABANDONED) === STATUS_OK) ended++;
  }
  return ended;
}
