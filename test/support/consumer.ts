// The C ABI consumer fixture (test/fixtures/consumer/consumer.cc), typed.
import { createRequire } from 'node:module';
import * as path from 'node:path';

/** What one consumer thread saw. */
export interface Tally {
  name: string;
  /** Spans whose end() returned HOTSPAN_OK. */
  recorded: number;
  /** Calls answered HOTSPAN_CLOSED. */
  closed: number;
  /** Any other non-OK status. */
  errors: number;
  /** OK answers after the thread's first HOTSPAN_CLOSED. */
  okAfterClosed: number;
}

export interface RunOptions {
  threads?: number;
  spansPerThread?: number;
  depth?: number;
  threadNamePrefix?: string;
  pauseUs?: number;
}

export interface Consumer {
  readonly abiVersion: number;
  run(api: unknown, options: RunOptions): Tally[];
  startBackground(api: unknown, options: RunOptions): void;
  backgroundRecorded(): number;
  /** Background threads that have recorded at least one chain. */
  backgroundStarted(): number;
  stopBackground(): Tally[];
  asyncCrossThread(api: unknown, n: number): { begun: number; ended: number; errors: number };
  bogusApi(abiVersion: number, structSize: number): unknown;
}

/** Builds the fixture if it is missing or stale, then loads it (both are CommonJS). */
export function loadConsumer(): Consumer {
  const requireHere = createRequire(__filename);
  const { buildConsumer } = requireHere(path.join(__dirname, '..', 'fixtures', 'build-consumer.js')) as {
    buildConsumer: () => string;
  };
  return requireHere(buildConsumer()) as Consumer;
}
