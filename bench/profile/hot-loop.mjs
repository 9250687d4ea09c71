// A plain loop over one hot case for a profiler (perf record, callgrind):
//   node --perf-basic-prof bench/profile/hot-loop.mjs <hotspan-id|hotspan-trace|hotspan-start|hotspan-attrs|floor|js-id> [spans] [warm-up spans]
// See bench/profile/README.md for the commands.
import { createRequire } from 'node:module';
import { floorPath } from '../lib/build.mjs';
import { makeTracer } from '../lib/hotspan.mjs';

const require = createRequire(import.meta.url);
const [which = 'hotspan-id', spansArg = '2e7', warmArg = '1e5'] = process.argv.slice(2);
const n = Math.floor(Number(spansArg));
let begin;
let end;
let trace;
let start;
let attrs;
const ROUTES = ['/users', '/orders', '/items', '/health'];
if (which === 'floor') {
  const f = require(floorPath);
  begin = f.begin;
  end = f.end;
} else {
  const t = makeTracer(which.startsWith('js') ? 'js' : 'native');
  const id = t.name('profile.span');
  begin = () => t.begin(id);
  end = () => t.end();
  trace = (fn) => t.trace(id, fn);
  start = () => t.start('profile.span').end();
  // micro.mjs's hotspan-attrs: a string from a few values and a number.
  attrs = (i) => t.begin(id, { route: ROUTES[i & 3], bytes: i });
}
const work = () => 0;
function loop(count) {
  if (which === 'hotspan-start') {
    for (let i = 0; i < count; i++) start();
    return;
  }
  if (which === 'hotspan-attrs') {
    for (let i = 0; i < count; i++) {
      attrs(i);
      end();
    }
    return;
  }
  if (which === 'hotspan-trace') {
    for (let i = 0; i < count; i++) trace(work);
    return;
  }
  for (let i = 0; i < count; i++) {
    begin(7);
    end();
  }
}
loop(Math.floor(Number(warmArg))); // warm-up
const t0 = process.hrtime.bigint();
loop(n);
const dt = Number(process.hrtime.bigint() - t0);
console.log(JSON.stringify({ case: which, spans: n, nsPerSpan: dt / n }));
