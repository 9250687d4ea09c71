// ESM entry of hotspan/auto (`node --import hotspan/auto app.mjs`): the
// CommonJS module, so --import and --require share one instance.
import auto from '../dist/auto.js';

export const { tracer, outPath } = auto;
export default auto;
