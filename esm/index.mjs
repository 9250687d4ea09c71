// ESM entry: the CommonJS build's named exports (one module instance for
// require and import, so both share one addon load and one warning state).
import cjs from '../dist/index.js';

export const { Tracer, SpanHandle, Query, SpanList, GroupView, GroupSet, formatStats } = cjs;
export default cjs;
