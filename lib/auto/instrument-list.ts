// HOTSPAN_INSTRUMENT as hotspan/auto reads it (lib/auto.ts): a comma list of
// hotspan's own instruments (INSTRUMENTS; `all` names every one, and so does
// an unset or empty value), and of OpenTelemetry instrumentations
// (lib/auto/auto-otel.ts):
//   otel             every @opentelemetry/instrumentation-* package installed
//                    where the program is
//   otel:<name>,...  those named: `otel:` takes the rest of the list, so
//                    hotspan's own instruments go before it
//                    (`http,otel:pg,ioredis`). A name is a short name (`pg`
//                    for @opentelemetry/instrumentation-pg) or a package name
//                    (`@opentelemetry/instrumentation-pg`, `@scope/pkg`).
// A name that is none of these is warned about and left out.

import { INSTRUMENTS, type Instrument } from './auto-record';

/** What HOTSPAN_INSTRUMENT selects. */
export interface InstrumentList {
  /** hotspan's own instruments. */
  hotspan: Set<Instrument>;
  /** The OpenTelemetry instrumentation packages named (full names), 'installed' for all of them, undefined for none. */
  otel: 'installed' | string[] | undefined;
}

/** The package an OpenTelemetry instrumentation's name stands for: `pg` is @opentelemetry/instrumentation-pg. */
export function otelPackage(name: string): string {
  if (name.startsWith('@')) return name;
  return `@opentelemetry/${name.startsWith('instrumentation-') ? name : `instrumentation-${name}`}`;
}

/** Reads HOTSPAN_INSTRUMENT; `warn` is told of each name it leaves out. */
export function parseInstrumentList(value: string | undefined, warn: (message: string) => void): InstrumentList {
  if (value === undefined || value.trim() === '' || value.trim() === 'all') return { hotspan: new Set(INSTRUMENTS), otel: undefined };
  const hotspan = new Set<Instrument>();
  let all = false;
  const named: string[] = [];
  let otelRest = false;
  for (const raw of value.split(',')) {
    let name = raw.trim();
    if (name === '') continue;
    if (name.startsWith('otel:')) {
      otelRest = true;
      name = name.slice('otel:'.length).trim();
      if (name === '') continue;
    }
    if (otelRest) {
      if (/^[@\w.\-/]+$/.test(name)) named.push(otelPackage(name));
      else warn(`hotspan/auto: HOTSPAN_INSTRUMENT names "${name}" after otel:, not a package name; ignored`);
    } else if (name === 'otel') all = true;
    else if (name === 'all') for (const i of INSTRUMENTS) hotspan.add(i);
    else if ((INSTRUMENTS as readonly string[]).includes(name)) hotspan.add(name as Instrument);
    else warn(`hotspan/auto: HOTSPAN_INSTRUMENT names "${name}", not one of all, ${INSTRUMENTS.join(', ')}, otel, otel:<package>; ignored`);
  }
  return { hotspan, otel: all ? 'installed' : named.length > 0 ? [...new Set(named)] : undefined };
}
