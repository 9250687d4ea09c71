// The cost of CPU profiling on the HTTP workload (issue 34): the HTTP bench
// server (http-server.mjs) without tracing, with hotspan, and with hotspan
// and tracer.profile({ intervalUs: 1000 }), modes alternating within each
// round (lib/http.mjs: a fresh server per measurement, warm-up discarded).
// Figures: medians over the rounds of the server's CPU per request at a fixed
// request rate (the same rate for every mode, so the same event-loop
// batching) and at saturation, and the profile's added CPU paired with the
// plain hotspan run of the same round.
//   node bench/cases/http-profile.mjs '{"rounds":5}'   prints one JSON line
import { measureMode } from '../lib/http.mjs';
import { paired, summarize } from '../lib/stats.mjs';

const cfg = { rounds: 5, warmupSec: 1, seconds: 3, connections: 10, fixedRate: 1000, fixedSeconds: 3, ...JSON.parse(process.argv[2] ?? '{}') };
const modes = ['none', 'hotspan', 'hotspan-profile'];
const per = Object.fromEntries(modes.map((m) => [m, []]));
for (let r = 0; r < cfg.rounds; r++) {
  for (let k = 0; k < modes.length; k++) {
    const m = modes[(k + r) % modes.length];
    per[m][r] = await measureMode(m, cfg);
  }
  process.stderr.write(`round ${r + 1}/${cfg.rounds} done\n`);
}
const field = (m, f) => per[m].map((x) => x[f]);
const med = (xs) => summarize(xs).median;
const out = { config: cfg, modes: {} };
for (const m of modes) {
  out.modes[m] = {
    cpuUsPerReqFixed: med(field(m, 'cpuUsPerReqFixed')),
    cpuUsPerReq: med(field(m, 'cpuUsPerReq')),
    rps: med(field(m, 'rps')),
    errors: per[m].reduce((a, x) => a + x.errors + x.non2xx, 0),
  };
}
// Profiling's added CPU per request over hotspan alone, as a fraction, paired by round.
const ratio = (f) => med(paired(field('hotspan-profile', f), field('hotspan', f), (x, y) => x / y - 1));
out.profileAddedCpuFixed = ratio('cpuUsPerReqFixed');
out.profileAddedCpuSaturated = ratio('cpuUsPerReq');
out.hotspanAddedCpuFixed = med(paired(field('hotspan', 'cpuUsPerReqFixed'), field('none', 'cpuUsPerReqFixed'), (x, y) => x / y - 1));
console.log(JSON.stringify(out));
