// OpenTelemetry instrumentations under hotspan/auto (HOTSPAN_INSTRUMENT's
// `otel` and `otel:<name>,...`, read by lib/auto/instrument-list.ts): each
// @opentelemetry/instrumentation-* package named, or every one installed, is
// loaded from where the program is (its working directory, then its main
// script's directory; never from hotspan's own dependencies), made
// (`new XxxInstrumentation()`, the one class it exports whose name ends in
// Instrumentation) and enabled on hotspan/otel's TracerProvider over the
// automatic tracer by `registerInstrumentations` of the
// @opentelemetry/instrumentation that instrumentation itself resolves. Their
// spans are then in the file hotspan/auto writes, on the track `otel`.
//
// One library, one span: an OpenTelemetry instrumentation that loaded turns
// off hotspan's own instruments for the same library (OVERLAPS), with one
// line on stderr saying so. Nothing is loaded unless HOTSPAN_INSTRUMENT names
// otel: lib/auto.ts requires this file (and hotspan/otel, and through it
// @opentelemetry/api) only then. A package that cannot be found or loaded,
// or that exports no instrumentation class, is one warning naming it.

import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

import type { Instrument } from './auto-record';

/**
 * hotspan's instruments an OpenTelemetry instrumentation (by package) records the same
 * library as: that instrumentation turns them off.
 */
export const OVERLAPS: Readonly<Record<string, readonly Instrument[]>> = {
  '@opentelemetry/instrumentation-http': ['http'],
  '@opentelemetry/instrumentation-undici': ['fetch'],
  '@opentelemetry/instrumentation-dns': ['dns'],
  '@opentelemetry/instrumentation-net': ['net'],
  '@opentelemetry/instrumentation-pg': ['pg'],
  '@opentelemetry/instrumentation-mysql2': ['mysql'],
  '@opentelemetry/instrumentation-ioredis': ['ioredis'],
  '@opentelemetry/instrumentation-redis': ['redis'],
  '@opentelemetry/instrumentation-redis-4': ['redis'],
  '@opentelemetry/instrumentation-express': ['express'],
  '@opentelemetry/instrumentation-fastify': ['fastify'],
  '@fastify/otel': ['fastify'],
};

/** An OpenTelemetry instrumentation as this file uses it. */
interface InstrumentationLike {
  setTracerProvider(provider: unknown): void;
  enable(): void;
}

type Register = (options: { instrumentations: InstrumentationLike[]; tracerProvider: unknown }) => unknown;

/** Where the program's packages are found: its working directory, then its main script's. */
export function programDirs(cwd = process.cwd(), main = process.argv[1]): string[] {
  const dirs = [cwd];
  if (main !== undefined && main !== '' && !main.startsWith('-')) {
    const dir = path.dirname(path.resolve(cwd, main));
    if (!dirs.includes(dir)) dirs.push(dir);
  }
  return dirs;
}

/** Every @opentelemetry/instrumentation-* package in the node_modules folders `dirs` resolve from, nearest first. */
export function installedInstrumentations(dirs: readonly string[]): string[] {
  const found = new Set<string>();
  for (const start of dirs) {
    for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
      if (path.basename(dir) !== 'node_modules') {
        let names: string[] = [];
        try {
          names = readdirSync(path.join(dir, 'node_modules', '@opentelemetry'));
        } catch {
          // No such folder.
        }
        for (const n of names.sort()) if (/^instrumentation-./.test(n)) found.add(`@opentelemetry/${n}`);
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return [...found];
}

/** The file `pkg` resolves to from the first of `dirs` that has it. */
function resolveFrom(dirs: readonly string[], pkg: string): string | undefined {
  for (const dir of dirs) {
    try {
      return createRequire(path.join(dir, 'hotspan-auto.js')).resolve(pkg);
    } catch {
      // Not from here.
    }
  }
  return undefined;
}

/** The instrumentation class a package exports: the one function named *Instrumentation with enable() on its prototype. */
function instrumentationClass(exports: unknown): (new () => InstrumentationLike) | undefined {
  if (exports === null || (typeof exports !== 'object' && typeof exports !== 'function')) return undefined;
  for (const [key, value] of Object.entries(exports as Record<string, unknown>)) {
    if (typeof value === 'function' && key.endsWith('Instrumentation') && typeof (value.prototype as { enable?: unknown } | undefined)?.enable === 'function') {
      return value as new () => InstrumentationLike;
    }
  }
  return undefined;
}

/** What startOtel did: the packages enabled, and hotspan's instruments left as they are or turned off. */
export interface OtelStarted {
  enabled: string[];
  hotspan: Set<Instrument>;
}

/**
 * Loads and enables the instrumentation packages `packages` (or every one installed) on `provider`
 * (already registered), resolved from `dirs`; returns them and `hotspan` less the instruments they replace.
 */
export function startOtel(
  packages: 'installed' | readonly string[],
  provider: unknown,
  hotspan: ReadonlySet<Instrument>,
  warn: (message: string) => void,
  notice: (line: string) => void,
  dirs = programDirs(),
): OtelStarted {
  const list = packages === 'installed' ? installedInstrumentations(dirs) : packages;
  if (list.length === 0) warn(`hotspan/auto: HOTSPAN_INSTRUMENT names otel, but no @opentelemetry/instrumentation-* package is installed where the program is (${dirs.join(', ')})`);
  const enabled: string[] = [];
  const own = new Set(hotspan);
  for (const pkg of list) {
    const file = resolveFrom(dirs, pkg);
    if (file === undefined) {
      warn(`hotspan/auto: HOTSPAN_INSTRUMENT names ${pkg}, which is not installed where the program is (${dirs.join(', ')}); ignored`);
      continue;
    }
    const req = createRequire(file);
    let instrumentation: InstrumentationLike;
    try {
      const Class = instrumentationClass(req(file));
      if (Class === undefined) {
        warn(`hotspan/auto: ${pkg} exports no instrumentation class (a function named *Instrumentation); ignored`);
        continue;
      }
      instrumentation = new Class();
      let register: Register | undefined;
      try {
        register = (req('@opentelemetry/instrumentation') as { registerInstrumentations?: Register }).registerInstrumentations;
      } catch {
        // Enabled by hand below.
      }
      if (register !== undefined) register({ instrumentations: [instrumentation], tracerProvider: provider });
      else {
        instrumentation.setTracerProvider(provider);
        instrumentation.enable();
      }
    } catch (e) {
      warn(`hotspan/auto: ${pkg} did not load: ${(e as Error)?.message ?? String(e)}; ignored`);
      continue;
    }
    enabled.push(pkg);
    for (const i of OVERLAPS[pkg] ?? []) {
      if (!own.delete(i)) continue;
      notice(`hotspan/auto: ${pkg} records ${i}; hotspan's own ${i} instrument is off`);
    }
  }
  return { enabled, hotspan: own };
}
