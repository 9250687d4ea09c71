// How a span's OpenTelemetry-only data (kind, status, events, links, dropped
// counts, scope) is stored: reserved `hotspan.*` keys in its attribute JSON
// (the interface in the OTLP encoder's notes: the encoder maps these keys,
// Perfetto and Chrome JSON show them as ordinary args). One writer
// (otelAttrs) and one reader (readOtelAttrs).

import type { Attributes as OtelAttributes, Link } from '@opentelemetry/api';

export const KIND_NAMES = ['internal', 'server', 'client', 'producer', 'consumer'] as const;
export type KindName = (typeof KIND_NAMES)[number];

export interface StoredEvent {
  readonly name: string;
  /** Decimal ns since the Unix epoch. */
  readonly time_unix_nano: string;
  readonly attributes?: OtelAttributes;
}

export interface StoredLink {
  readonly trace_id: string;
  readonly span_id: string;
  readonly trace_state?: string;
  readonly flags: number;
  readonly attributes?: OtelAttributes;
}

export interface OtelData {
  kind: number; // api.SpanKind (INTERNAL = 0 ... CONSUMER = 4)
  status: 'ok' | 'error' | undefined;
  statusMessage: string | undefined;
  events: StoredEvent[];
  links: StoredLink[];
  dropped: { attributes: number; events: number; links: number };
  scope: { name: string; version?: string };
}

export const PREFIX = 'hotspan.';
/** The keys otelAttrs writes (and readOtelAttrs reads). */
const RESERVED: ReadonlySet<string> = new Set(['hotspan.kind', 'hotspan.status', 'hotspan.status_message', 'hotspan.events', 'hotspan.links', 'hotspan.dropped', 'hotspan.scope']);

/** A key an OTel span's attributes cannot hold: otelAttrs stores the span's own data under it. */
export function isReservedOtelKey(key: string): boolean {
  return RESERVED.has(key);
}

export function storedLink(link: Link): StoredLink {
  const c = link.context;
  const ts = c.traceState?.serialize();
  return {
    trace_id: c.traceId,
    span_id: c.spanId,
    ...(ts !== undefined && ts !== '' ? { trace_state: ts } : {}),
    flags: c.traceFlags,
    ...(link.attributes !== undefined ? { attributes: link.attributes } : {}),
  };
}

/** `,"hotspan.scope":{...}`: the same for every span of a scope, so made once per scope (scopeSuffix). */
export function scopeSuffix(scope: OtelData['scope']): string {
  return `,"hotspan.scope":${JSON.stringify(scope)}`;
}

/**
 * The attribute JSON object of a span: its attributes, then the reserved keys
 * that are set. `scopeJson` is scopeSuffix(d.scope). Built as text after one
 * JSON.stringify of the attributes (no copy of the object: an HTTP span has a
 * dozen attributes, and copying them cost more than the rest of its end).
 * `attributes` holds no reserved key (isReservedOtelKey).
 */
export function otelAttrs(attributes: OtelAttributes, d: OtelData, scopeJson: string): string {
  let extra = '';
  if (d.kind !== 0) extra += `,"hotspan.kind":"${KIND_NAMES[d.kind]}"`;
  if (d.status !== undefined) extra += `,"hotspan.status":"${d.status}"`;
  if (d.statusMessage !== undefined && d.statusMessage !== '') extra += `,"hotspan.status_message":${JSON.stringify(d.statusMessage)}`;
  if (d.events.length > 0) extra += `,"hotspan.events":${JSON.stringify(d.events)}`;
  if (d.links.length > 0) extra += `,"hotspan.links":${JSON.stringify(d.links)}`;
  const { attributes: da, events: de, links: dl } = d.dropped;
  if (da + de + dl > 0) extra += `,"hotspan.dropped":${JSON.stringify(d.dropped)}`;
  extra += scopeJson;
  const json = JSON.stringify(attributes);
  // json is "{}" or "{...}": the reserved members go before its closing brace.
  return json.length === 2 ? `{${extra.slice(1)}}` : `${json.slice(0, -1)}${extra}}`;
}

/** A span's attributes without the reserved keys, and what those keys hold. */
export function readOtelAttrs(all: Readonly<Record<string, unknown>> | undefined): { attributes: OtelAttributes; data: OtelData } {
  const attributes: Record<string, unknown> = {};
  const data: OtelData = {
    kind: 0,
    status: undefined,
    statusMessage: undefined,
    events: [],
    links: [],
    dropped: { attributes: 0, events: 0, links: 0 },
    scope: { name: 'hotspan' },
  };
  for (const [k, v] of Object.entries(all ?? {})) {
    if (!k.startsWith(PREFIX)) {
      attributes[k] = v;
      continue;
    }
    switch (k) {
      case 'hotspan.kind': {
        const i = KIND_NAMES.indexOf(v as KindName);
        if (i >= 0) data.kind = i;
        break;
      }
      case 'hotspan.status':
        if (v === 'ok' || v === 'error') data.status = v;
        break;
      case 'hotspan.status_message':
        if (typeof v === 'string') data.statusMessage = v;
        break;
      case 'hotspan.events':
        if (Array.isArray(v)) data.events = v as StoredEvent[];
        break;
      case 'hotspan.links':
        if (Array.isArray(v)) data.links = v as StoredLink[];
        break;
      case 'hotspan.dropped':
        if (typeof v === 'object' && v !== null) data.dropped = { ...data.dropped, ...(v as OtelData['dropped']) };
        break;
      case 'hotspan.scope':
        if (typeof v === 'object' && v !== null) data.scope = v as OtelData['scope'];
        break;
      default:
        attributes[k] = v;
    }
  }
  return { attributes: attributes as OtelAttributes, data };
}
