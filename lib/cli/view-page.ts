// The page of `hotspan view`: HTML, CSS and script in one string, with
// /*HOTSPAN_TITLE*/ and /*HOTSPAN_DATA*/ replaced by lib/cli/view.ts. Canvas
// drawing; per (row, depth) the spans are sorted and disjoint, so a frame
// binary-searches the first visible one and merges runs narrower than a pixel.
// The initial range is the spans' extent (first start to last end) with a 2%
// margin each side; counter samples do not widen it, as a process samples
// some (the event-loop delay) when it exits, long after its last span.
// Counter tracks are rows of their own below the spans: a step chart (a value
// holds until the next sample, the last one to the right edge) whose samples
// within one pixel column become one vertical stroke from their least to their
// greatest value; a few samples in view get a dot each, and a track whose
// samples all lie right of the range gets a mark at the right edge.
// The flame graph nests by call path (view-flame.ts); children whose total
// outgrows their parent's (concurrent ones, async ones outliving it) are
// drawn shrunk to fit under it, and their tooltips give their own total.
// Rows of several processes are grouped under a header row per process. CPU
// samples: view-samples-page.ts. Clicking a span selects it (an outline) and
// shows its samples' flame graph and functions; clicking elsewhere, the span
// flame graph again.
// The page publishes what it drew on window.hotspanView (rows, spans shown,
// rectangles drawn, counter samples and points, sample ticks, the range, the
// flame graph's levels, the selection, draw time) for tests and for the curious.

import { SAMPLES_SCRIPT } from './view-samples-page';

export const VIEW_PAGE: string = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>hotspan: /*HOTSPAN_TITLE*/</title>
<style>
  html, body { margin: 0; height: 100%; font: 12px system-ui, sans-serif; color: #222; background: #fff; }
  body { display: flex; flex-direction: column; }
  header { display: flex; gap: 12px; align-items: center; padding: 6px 10px; border-bottom: 1px solid #ddd; }
  header h1 { font-size: 13px; margin: 0; font-weight: 600; }
  header .info { color: #666; }
  #main { position: relative; flex: 1 1 auto; min-height: 120px; }
  #flame { position: relative; flex: 0 0 200px; border-top: 1px solid #ddd; }
  canvas { display: block; position: absolute; left: 0; top: 0; }
  #tip { position: fixed; pointer-events: none; background: rgba(30,30,30,.93); color: #fff; padding: 6px 8px;
         border-radius: 4px; max-width: 480px; white-space: pre-wrap; display: none; font: 11px ui-monospace, monospace; z-index: 2; }
  input { font: inherit; padding: 2px 6px; width: 220px; }
  #hot { position: absolute; right: 0; top: 0; bottom: 0; width: 360px; overflow: auto; display: none;
         border-left: 1px solid #ddd; background: #fff; font: 11px ui-monospace, monospace; }
  #hot .title { padding: 3px 6px; color: #555; font: 11px system-ui, sans-serif; }
  #hot table { border-collapse: collapse; width: 100%; }
  #hot th, #hot td { text-align: right; padding: 1px 6px; white-space: nowrap; }
  #hot th:first-child, #hot td:first-child { text-align: left; max-width: 170px; overflow: hidden; text-overflow: ellipsis; }
</style>
</head>
<body>
<header>
  <h1>hotspan</h1><span class="info" id="info"></span>
  <input id="search" type="search" placeholder="search names" aria-label="search span names">
  <span class="info" id="matches"></span>
  <span class="info">wheel: zoom, drag: pan, double-click: reset</span>
</header>
<div id="main"><canvas id="tl"></canvas></div>
<div id="flame"><canvas id="fg"></canvas><div id="hot"></div></div>
<div id="tip"></div>
<script id="hotspan-data" type="application/json">/*HOTSPAN_DATA*/</script>
<script>
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('hotspan-data').textContent);
  function col(b64, Type) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Type(bytes.buffer);
  }
  var NAME = col(D.name, Int32Array), ROW = col(D.row, Int32Array), DEPTH = col(D.depth, Int32Array);
  var START = col(D.start, Float64Array), DUR = col(D.dur, Float64Array);
  var N = NAME.length, ROWS = D.rows.length;
  var LANE_H = 18, LABEL_W = 170, TOP = 4, COUNTER_H = 44;
  var CTS = D.counters.map(function (c) { return col(c.ts, Float64Array); });
  var CV = D.counters.map(function (c) { return col(c.value, Float64Array); });
  var NC = D.counters.length;
${SAMPLES_SCRIPT}
  // Offsets of each (row, depth) run; rowY: top of each row in px; a process
  // group's header above its first row (groupY); a sampled row's strip under
  // its spans (sampleY, -1 for none).
  var GROUP_H = 20, groupAt = {}, groupY = [], sampleY = [];
  D.groups.forEach(function (g, i) { groupAt[g.row] = i; });
  var runs = [], rowY = [], y = TOP;
  for (var r = 0; r < ROWS; r++) {
    if (groupAt[r] !== undefined) { groupY.push(y); y += GROUP_H; }
    rowY.push(y); y += D.rowDepths[r] * LANE_H;
    if (SM && SM.runs[r]) { sampleY.push(y); y += SAMPLE_H + 2; } else sampleY.push(-1);
    y += 6; runs.push([]);
  }
  // counterY: top of each counter row, after the span rows.
  var counterY = [];
  for (var c = 0; c < NC; c++) { counterY.push(y); y += COUNTER_H + 6; }
  var totalH = y;
  for (var k = 0; k < N; k++) {
    var rr = runs[ROW[k]], d = DEPTH[k];
    if (!rr[d]) rr[d] = [k, k];
    rr[d][1] = k + 1;
  }
  // The spans' extent (their zero is the first start); with no span, the counter and CPU samples'.
  var tFirst = Infinity, tEnd = -Infinity;
  for (k = 0; k < N; k++) { tFirst = Math.min(tFirst, START[k]); tEnd = Math.max(tEnd, START[k] + DUR[k]); }
  if (N === 0) {
    for (c = 0; c < NC; c++) if (CTS[c].length) { tFirst = Math.min(tFirst, CTS[c][0]); tEnd = Math.max(tEnd, CTS[c][CTS[c].length - 1]); }
    if (SM) for (k = 0; k < SM.ts.length; k++) { tFirst = Math.min(tFirst, SM.ts[k]); tEnd = Math.max(tEnd, SM.ts[k] + SM.weight[k]); }
  }
  if (tFirst === Infinity) { tFirst = 0; tEnd = 0; }
  if (tEnd - tFirst <= 0) tEnd = tFirst + 1e6;
  var margin = (tEnd - tFirst) * 0.02;
  var home = { t0: tFirst - margin, t1: tEnd + margin };
  var view = { t0: home.t0, t1: home.t1, scroll: 0 };
  var query = '', matchName = null;

  function color(nameId) {
    var h = (nameId * 2654435761) >>> 0;
    return 'hsl(' + (h % 360) + ',55%,' + (62 + (h >>> 9) % 14) + '%)';
  }
  function fmt(ns) {
    if (ns < 0) return '-' + fmt(-ns);
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toFixed(3) + ' µs';
    return Math.round(ns) + ' ns';
  }

  var tl = document.getElementById('tl'), main = document.getElementById('main');
  var ctx = tl.getContext('2d');
  var W = 0, H = 0, dpr = window.devicePixelRatio || 1;
  var stats = { rows: ROWS, spans: N, spansShown: 0, rectsDrawn: 0, counters: NC, counterSamples: 0,
    counterSamplesShown: 0, counterPoints: 0, counterDots: 0, counterEdgeMarks: 0, view: { t0: 0, t1: 0 },
    spanExtent: { t0: tFirst, t1: tEnd }, flameLevels: 0, flameBoxes: 0, drawMs: 0, frames: 0, ready: false,
    samples: SM ? SM.ts.length : 0, samplesShown: 0, sampleTicks: 0, groups: D.groups.map(function (g) { return g.name; }),
    selection: null };
  for (c = 0; c < NC; c++) stats.counterSamples += CTS[c].length;
  // Where things are (CSS px from the canvas's top left, before any scroll).
  stats.layout = { labelW: LABEL_W, laneH: LANE_H, counterH: COUNTER_H, rowY: rowY, counterY: counterY, flameTop: 20,
    groupY: groupY, sampleY: sampleY, sampleH: SAMPLE_H };
  var selected = -1;
  window.hotspanView = stats;

  function resize() {
    W = main.clientWidth; H = main.clientHeight;
    tl.width = W * dpr; tl.height = H * dpr; tl.style.width = W + 'px'; tl.style.height = H + 'px';
    draw();
  }

  // Last i with ts[i] <= t, or -1.
  function lastAtOrBefore(ts, t) {
    var a = 0, b = ts.length;
    while (a < b) { var m = (a + b) >> 1; if (ts[m] <= t) a = m + 1; else b = m; }
    return a - 1;
  }
  function counterScale(c) {
    var lo = Math.min(0, D.counters[c].min), hi = Math.max(0, D.counters[c].max);
    return hi > lo ? [lo, hi] : [lo, lo + 1];
  }
  function fmtValue(v) { return String(Number(v.toPrecision(6))); }

  var hue = function (c) { return (c * 67 + 200) % 360; };
  // One counter row: the step line and the area under it (down to 0, or the
  // least value when all are negative). Returns [samples in view, points
  // drawn, dots drawn, edge marks drawn].
  function drawCounter(c, top, pxPerNs) {
    var ts = CTS[c], vs = CV[c], n = ts.length;
    var mid = top + COUNTER_H / 2;
    ctx.textBaseline = 'middle';
    if (n === 0) { ctx.fillStyle = '#777'; ctx.fillText('no samples', LABEL_W + 6, mid); return [0, 0, 0, 0]; }
    var sc = counterScale(c), lo = sc[0], hi = sc[1];
    var yOf = function (v) { return top + COUNTER_H - 1 - (v - lo) / (hi - lo) * (COUNTER_H - 4); };
    var xOf = function (t) { return Math.max(LABEL_W, Math.min(W, LABEL_W + (t - view.t0) * pxPerNs)); };
    var i = Math.max(0, lastAtOrBefore(ts, view.t0));
    var first = i;
    if (ts[i] > view.t1) {
      // Every sample lies right of the range: say so at the right edge.
      var label = (n === 1 ? 'its sample: ' : 'first sample: ') + fmtValue(vs[i]) + ' at ' + fmt(ts[i]);
      ctx.fillStyle = 'hsl(' + hue(c) + ',60%,38%)';
      ctx.beginPath(); ctx.moveTo(W - 1, mid); ctx.lineTo(W - 9, mid - 6); ctx.lineTo(W - 9, mid + 6); ctx.closePath(); ctx.fill();
      ctx.textAlign = 'right'; ctx.fillText(label, W - 12, mid); ctx.textAlign = 'left';
      return [0, 0, 0, 1];
    }
    var xStart = xOf(ts[i]), yLast = yOf(vs[i]), colPx = Math.floor(xStart), yMin = yLast, yMax = yLast, many = false;
    var shown = 1, points = 1;
    ctx.beginPath();
    ctx.moveTo(xStart, yLast);
    for (i++; i < n && ts[i] <= view.t1; i++) {
      shown++;
      var yi = yOf(vs[i]), xi = xOf(ts[i]), px = Math.floor(xi);
      if (px === colPx) {
        if (yi < yMin) yMin = yi;
        if (yi > yMax) yMax = yi;
        yLast = yi; many = true;
        continue;
      }
      if (many) { ctx.lineTo(colPx, yMin); ctx.lineTo(colPx, yMax); ctx.lineTo(colPx, yLast); points += 3; }
      ctx.lineTo(xi, yLast); ctx.lineTo(xi, yi); points += 2;
      colPx = px; yLast = yMin = yMax = yi; many = false;
    }
    if (many) { ctx.lineTo(colPx, yMin); ctx.lineTo(colPx, yMax); ctx.lineTo(colPx, yLast); points += 3; }
    // The last value holds to the next sample (out of view) or, after the last sample, to the right edge.
    var xEnd = i < n ? xOf(ts[i]) : W;
    ctx.lineTo(xEnd, yLast); points++;
    ctx.strokeStyle = 'hsl(' + hue(c) + ',60%,38%)'; ctx.lineWidth = 1.25; ctx.stroke();
    var base = yOf(Math.max(lo, Math.min(0, hi)));
    ctx.lineTo(xEnd, base); ctx.lineTo(xStart, base); ctx.closePath();
    ctx.fillStyle = 'hsla(' + hue(c) + ',60%,55%,.35)'; ctx.fill();
    // A few samples in view: a dot on each (a sample at the right edge stays visible).
    var dots = 0;
    if (shown <= 64) {
      ctx.fillStyle = 'hsl(' + hue(c) + ',60%,38%)';
      for (var j = first; j < i; j++) {
        if (ts[j] < view.t0) continue;
        ctx.beginPath(); ctx.arc(Math.min(xOf(ts[j]), W - 3), yOf(vs[j]), 3, 0, 2 * Math.PI); ctx.fill(); dots++;
      }
    }
    return [shown, points, dots, 0];
  }

  // First k in [a, b) with START[k] + DUR[k] >= t (ends are sorted too: a run's spans are disjoint).
  function firstEnding(a, b, t) {
    while (a < b) { var m = (a + b) >> 1; if (START[m] + DUR[m] < t) a = m + 1; else b = m; }
    return a;
  }

  function draw() {
    var t = performance.now();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    var plotW = W - LABEL_W, span = view.t1 - view.t0, pxPerNs = plotW / span;
    var shown = 0, rects = 0, sShown = 0, sTicks = 0;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (var r = 0; r < ROWS; r++) {
      var top = rowY[r] - view.scroll;
      var h = D.rowDepths[r] * LANE_H, hb = h + (sampleY[r] >= 0 ? SAMPLE_H + 2 : 0);
      if (top > H || top + hb < 0) continue;
      ctx.fillStyle = r % 2 ? '#fafafa' : '#f2f4f7';
      ctx.fillRect(LABEL_W, top - 2, plotW, hb + 4);
      var runsR = runs[r];
      for (var d = 0; d < runsR.length; d++) {
        if (!runsR[d]) continue;
        var a = runsR[d][0], b = runsR[d][1], yy = top + d * LANE_H;
        var lastPx = -1;
        for (var k = firstEnding(a, b, view.t0); k < b && START[k] <= view.t1; k++) {
          shown++;
          var x0 = LABEL_W + (START[k] - view.t0) * pxPerNs, x1 = x0 + DUR[k] * pxPerNs;
          if (x0 < LABEL_W) x0 = LABEL_W;
          if (x1 > W) x1 = W;
          if (x1 - x0 < 1) {
            // Narrower than a pixel: one 1px mark per pixel column.
            var px = Math.floor(x0);
            if (px === lastPx) continue;
            lastPx = px; x1 = px + 1; x0 = px;
          } else {
            lastPx = Math.floor(x1);
          }
          var dim = matchName !== null && !matchName[NAME[k]];
          ctx.fillStyle = dim ? '#e3e3e3' : color(NAME[k]);
          ctx.fillRect(x0, yy, x1 - x0, LANE_H - 2);
          rects++;
          if (x1 - x0 > 30) {
            ctx.fillStyle = dim ? '#999' : '#111';
            ctx.save(); ctx.beginPath(); ctx.rect(x0, yy, x1 - x0 - 2, LANE_H); ctx.clip();
            ctx.fillText(D.names[NAME[k]], x0 + 3, yy + LANE_H / 2 - 1);
            ctx.restore();
          }
        }
      }
      if (sampleY[r] >= 0) {
        var got0 = drawSamples(r, sampleY[r] - view.scroll, pxPerNs);
        sShown += got0[0]; sTicks += got0[1];
      }
      ctx.fillStyle = '#fff'; ctx.fillRect(0, top - 2, LABEL_W, hb + 4);
      ctx.fillStyle = '#333'; ctx.fillText(D.rows[r], 6, top + LANE_H / 2 - 1, LABEL_W - 10);
      if (sampleY[r] >= 0) {
        ctx.fillStyle = '#777'; ctx.font = '9px system-ui, sans-serif';
        ctx.fillText('cpu samples', 14, sampleY[r] - view.scroll + SAMPLE_H / 2, LABEL_W - 20); ctx.font = '11px system-ui, sans-serif';
      }
    }
    for (var gi = 0; gi < groupY.length; gi++) {
      var gy = groupY[gi] - view.scroll;
      if (gy > H || gy + GROUP_H < 0) continue;
      ctx.fillStyle = '#dfe4ec'; ctx.fillRect(0, gy, W, GROUP_H - 2);
      ctx.fillStyle = '#111'; ctx.font = '600 11px system-ui, sans-serif';
      ctx.fillText(D.groups[gi].name, 6, gy + GROUP_H / 2 - 1, W - 12); ctx.font = '11px system-ui, sans-serif';
    }
    if (selected >= 0) {
      var sx0 = Math.max(LABEL_W, LABEL_W + (START[selected] - view.t0) * pxPerNs);
      var sx1 = Math.min(W, LABEL_W + (START[selected] + DUR[selected] - view.t0) * pxPerNs);
      if (sx1 >= LABEL_W && sx0 <= W) {
        ctx.strokeStyle = '#000'; ctx.lineWidth = 2;
        ctx.strokeRect(sx0, rowY[ROW[selected]] + DEPTH[selected] * LANE_H - view.scroll, Math.max(1, sx1 - sx0), LANE_H - 2);
      }
    }
    var cShown = 0, cPoints = 0, cDots = 0, cMarks = 0;
    for (var c = 0; c < NC; c++) {
      var ctop = counterY[c] - view.scroll;
      if (ctop > H || ctop + COUNTER_H < 0) continue;
      ctx.fillStyle = (ROWS + c) % 2 ? '#fafafa' : '#f2f4f7';
      ctx.fillRect(LABEL_W, ctop - 2, plotW, COUNTER_H + 4);
      ctx.save(); ctx.beginPath(); ctx.rect(LABEL_W, ctop - 2, plotW, COUNTER_H + 4); ctx.clip();
      var got = drawCounter(c, ctop, pxPerNs);
      ctx.restore();
      cShown += got[0]; cPoints += got[1]; cDots += got[2]; cMarks += got[3];
      ctx.fillStyle = '#fff'; ctx.fillRect(0, ctop - 2, LABEL_W, COUNTER_H + 4);
      ctx.fillStyle = '#333'; ctx.fillText(D.counters[c].name, 6, ctop + LANE_H / 2 - 1, LABEL_W - 10);
      var sc = counterScale(c);
      ctx.fillStyle = '#777'; ctx.fillText(fmtValue(sc[0]) + ' .. ' + fmtValue(sc[1]), 6, ctop + LANE_H * 1.5 - 1, LABEL_W - 10);
    }
    // Time axis.
    ctx.fillStyle = 'rgba(255,255,255,.9)'; ctx.fillRect(LABEL_W, H - 16, plotW, 16);
    ctx.fillStyle = '#555';
    var step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    for (var g = Math.ceil(view.t0 / step) * step; g <= view.t1; g += step) {
      var gx = LABEL_W + (g - view.t0) * pxPerNs;
      ctx.fillRect(gx, H - 16, 1, 5);
      ctx.fillText(fmt(g), gx + 3, H - 8);
    }
    stats.spansShown = shown; stats.rectsDrawn = rects; stats.frames++;
    stats.samplesShown = sShown; stats.sampleTicks = sTicks;
    stats.counterSamplesShown = cShown; stats.counterPoints = cPoints;
    stats.counterDots = cDots; stats.counterEdgeMarks = cMarks; stats.view = { t0: view.t0, t1: view.t1 };
    stats.drawMs = performance.now() - t;
  }

  function hit(mx, my) {
    var yAbs = my + view.scroll;
    for (var r = 0; r < ROWS; r++) {
      var top = rowY[r], d = Math.floor((yAbs - top) / LANE_H);
      if (d < 0 || d >= D.rowDepths[r] || !runs[r][d]) continue;
      var t = view.t0 + (mx - LABEL_W) / (W - LABEL_W) * (view.t1 - view.t0);
      var slack = 2 * (view.t1 - view.t0) / (W - LABEL_W);
      var a = runs[r][d][0], b = runs[r][d][1];
      var k = firstEnding(a, b, t - slack);
      if (k < b && START[k] <= t + slack) return k;
    }
    return -1;
  }

  // The counter sample in force under (mx, my): its text, or null.
  function counterTip(mx, my) {
    var yAbs = my + view.scroll;
    for (var c = 0; c < NC; c++) {
      if (yAbs < counterY[c] || yAbs >= counterY[c] + COUNTER_H) continue;
      var t = view.t0 + (mx - LABEL_W) / (W - LABEL_W) * (view.t1 - view.t0);
      var i = lastAtOrBefore(CTS[c], t);
      if (i < 0) return null;
      return D.counters[c].name + '\\nvalue ' + String(CV[c][i]) + '\\nsince ' + fmt(CTS[c][i]) +
        (i + 1 < CTS[c].length ? '\\nuntil ' + fmt(CTS[c][i + 1]) : '');
    }
    return null;
  }

  var tip = document.getElementById('tip');
  function showTip(e) {
    var rect = tl.getBoundingClientRect(), mx = e.clientX - rect.left, my = e.clientY - rect.top;
    var k = hit(mx, my), text = k < 0 && mx >= LABEL_W ? counterTip(mx, my) : null;
    if (k < 0 && text === null && mx >= LABEL_W && SM) {
      var yAbs = my + view.scroll, tAt = view.t0 + (mx - LABEL_W) / (W - LABEL_W) * (view.t1 - view.t0);
      for (var r = 0; r < ROWS; r++) {
        if (sampleY[r] < 0 || yAbs < sampleY[r] || yAbs >= sampleY[r] + SAMPLE_H) continue;
        var j = sampleAt(r, tAt);
        if (j >= 0) text = sampleTip(j);
      }
    }
    if (k < 0 && text === null) { tip.style.display = 'none'; return; }
    if (k >= 0) {
      text = D.names[NAME[k]] + '\\n' + D.rows[ROW[k]] + '\\nstart ' + fmt(START[k]) + '\\nduration ' + fmt(DUR[k]);
      var a = D.args[k];
      if (a) { try { var o = JSON.parse(a); for (var key in o) text += '\\n' + key + ': ' + JSON.stringify(o[key]); } catch (err) { text += '\\n' + a; } }
    }
    tip.textContent = text;
    tip.style.display = 'block';
    tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 300) + 'px';
    tip.style.top = (e.clientY + 12) + 'px';
  }

  var drag = null, down = null;
  tl.addEventListener('mousedown', function (e) {
    drag = { x: e.clientX, y: e.clientY, t0: view.t0, t1: view.t1, s: view.scroll };
    down = { x: e.clientX, y: e.clientY };
  });
  // A click (not a drag) on a span selects it; elsewhere, clears the selection.
  tl.addEventListener('click', function (e) {
    if (down && Math.abs(e.clientX - down.x) + Math.abs(e.clientY - down.y) > 3) return;
    var rect = tl.getBoundingClientRect();
    select(hit(e.clientX - rect.left, e.clientY - rect.top));
  });
  window.addEventListener('mouseup', function () { drag = null; });
  tl.addEventListener('mousemove', function (e) {
    if (drag) {
      var dt = (e.clientX - drag.x) / (W - LABEL_W) * (drag.t1 - drag.t0);
      view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt;
      view.scroll = Math.max(0, Math.min(totalH - H / 2, drag.s - (e.clientY - drag.y)));
      draw();
    }
    showTip(e);
  });
  tl.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  tl.addEventListener('wheel', function (e) {
    e.preventDefault();
    var rect = tl.getBoundingClientRect();
    var f = Math.max(0, Math.min(1, (e.clientX - rect.left - LABEL_W) / (W - LABEL_W)));
    var at = view.t0 + f * (view.t1 - view.t0);
    var z = Math.exp(e.deltaY * 0.002);
    var w = Math.max(1000, (view.t1 - view.t0) * z);
    view.t0 = at - f * w; view.t1 = view.t0 + w;
    draw();
  }, { passive: false });
  tl.addEventListener('dblclick', function () { view.t0 = home.t0; view.t1 = home.t1; view.scroll = 0; draw(); });

  var search = document.getElementById('search'), matches = document.getElementById('matches');
  search.addEventListener('input', function () {
    query = search.value.trim().toLowerCase();
    if (query === '') { matchName = null; matches.textContent = ''; draw(); return; }
    matchName = D.names.map(function (n) { return n.toLowerCase().indexOf(query) >= 0; });
    var count = 0;
    for (var k = 0; k < N; k++) if (matchName[NAME[k]]) count++;
    matches.textContent = count + ' matching span' + (count === 1 ? '' : 's');
    stats.matches = count;
    draw();
  });

  // Flame graph: an icicle of call paths, widths by total, children by total
  // descending. Of the spans (view-flame.ts's nodes: name paths, total time),
  // or of the selected span's samples (sampleTree: stacks).
  var fg = document.getElementById('fg'), flame = document.getElementById('flame'), fctx = fg.getContext('2d');
  var hot = document.getElementById('hot');
  var spanKids = D.fgName.map(function () { return []; }), spanRoots = [], spanSum = 0;
  D.fgParent.forEach(function (p, i) { if (p < 0) { spanRoots.push(i); spanSum += D.fgTotal[i]; } else spanKids[p].push(i); });
  var spanTree = { total: D.fgTotal, kids: spanKids, roots: spanRoots, sum: spanSum,
    label: function (n) { return D.names[D.fgName[n]]; }, colorOf: function (n) { return color(D.fgName[n]); }, amount: fmt,
    title: 'flame graph: total time by call path (all threads and tracks)' };
  var tree = spanTree;
  var fgBoxes = [];
  function drawFlame() {
    var fw = flame.clientWidth - (tree === spanTree ? 0 : hot.offsetWidth), fh = flame.clientHeight;
    fg.width = fw * dpr; fg.height = fh * dpr; fg.style.width = fw + 'px'; fg.style.height = fh + 'px';
    fctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    fctx.clearRect(0, 0, fw, fh);
    fctx.font = '11px system-ui, sans-serif'; fctx.textBaseline = 'middle';
    fctx.fillStyle = '#555'; fctx.fillText(tree.title, 6, 9);
    fgBoxes = [];
    var levels = 0, T = tree.total;
    function byTotal(x, y) { return T[y] - T[x]; }
    // list: sibling nodes laid from x in room px; they shrink to fit it.
    function lay(list, x, depth, scale, room) {
      list.sort(byTotal);
      var sum = 0;
      for (var i = 0; i < list.length; i++) sum += T[list[i]];
      if (sum * scale > room) scale = room / sum;
      for (i = 0; i < list.length; i++) {
        var n = list[i], w = T[n] * scale;
        if (w >= 0.5) {
          var yy = 20 + depth * LANE_H;
          fctx.fillStyle = tree.colorOf(n);
          fctx.fillRect(x, yy, Math.max(1, w - 1), LANE_H - 2);
          fgBoxes.push([x, yy, w, n]);
          if (depth + 1 > levels) levels = depth + 1;
          if (w > 30) { fctx.fillStyle = '#111'; fctx.fillText(tree.label(n), x + 3, yy + LANE_H / 2 - 1, w - 6); }
          lay(tree.kids[n].slice(), x, depth + 1, scale, w);
        }
        x += w;
      }
    }
    if (tree.sum > 0) lay(tree.roots.slice(), 0, 0, fw / tree.sum, fw);
    stats.flameLevels = levels; stats.flameBoxes = fgBoxes.length;
    stats.flameRoots = tree.roots.slice().sort(byTotal).map(tree.label);
  }
  // Selects span k (-1: none): its samples' flame graph and table.
  function select(k) {
    selected = k;
    var list = k >= 0 ? samplesOfSpan(k) : [];
    if (k < 0) {
      tree = spanTree; hot.style.display = 'none'; stats.selection = null;
    } else {
      var title = D.names[NAME[k]] + ' (' + D.rows[ROW[k]] + ', ' + fmt(DUR[k]) + '): ' + list.length + ' CPU sample' + (list.length === 1 ? '' : 's');
      if (list.length === 0) {
        tree = spanTree; hot.style.display = 'none';
      } else {
        tree = sampleTree(list);
        tree.title = 'flame graph of the samples in ' + title;
        hot.style.display = 'block';
        showTable(hot, title + ', by self time', tree);
      }
      stats.selection = { span: k, name: D.names[NAME[k]], samples: list.length,
        functions: tree === spanTree ? [] : tree.rows.map(function (x) { return { function: x.function, self: x.self, total: x.total, samples: x.samples }; }) };
    }
    draw(); drawFlame();
  }
  fg.addEventListener('mousemove', function (e) {
    var rect = fg.getBoundingClientRect(), mx = e.clientX - rect.left, my = e.clientY - rect.top;
    for (var i = 0; i < fgBoxes.length; i++) {
      var b = fgBoxes[i];
      if (mx >= b[0] && mx < b[0] + b[2] && my >= b[1] && my < b[1] + LANE_H) {
        tip.textContent = tree.label(b[3]) + '\\ntotal ' + tree.amount(tree.total[b[3]]) + ' (' + (100 * tree.total[b[3]] / tree.sum).toFixed(1) + '%)';
        tip.style.display = 'block'; tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY - 40) + 'px';
        return;
      }
    }
    tip.style.display = 'none';
  });
  fg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });

  document.getElementById('info').textContent = D.title + ': ' + N + ' spans, ' + ROWS + ' rows, ' +
    (NC ? NC + ' counter' + (NC === 1 ? '' : 's') + ', ' : '') +
    (SM ? SM.ts.length + ' CPU sample' + (SM.ts.length === 1 ? '' : 's') + ' (click a span for its flame graph), ' : '') + fmt(tEnd - tFirst) +
    (D.truncated ? ' (file cut off: read up to its last whole record)' : '');
  window.addEventListener('resize', function () { resize(); drawFlame(); });
  resize();
  drawFlame();
  stats.ready = true;
})();
</script>
</body>
</html>
`;
