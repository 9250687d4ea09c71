// Types of the ESM entry of hotspan/otel (esm/otel.mjs): the CommonJS build's declarations.
export * from '../dist/otel/index.js';
import * as otel from '../dist/otel/index.js';
export default otel;
