// Types of the ESM entry (esm/index.mjs): the CommonJS build's declarations,
// with the module object as the default export, as index.mjs has it.
export * from '../dist/index.js';
import * as hotspan from '../dist/index.js';
export default hotspan;
