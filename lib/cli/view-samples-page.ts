// The CPU-sample part of `hotspan view`'s page script (view-page.ts inserts
// it into its own, whose helpers col, color, fmt, ctx, view, stats and D it
// uses). Each sampled thread's row gets a strip under its spans: a tick per
// sample from its time to the next (its weight), coloured by the function on
// top of its stack, merged to one tick per pixel column when narrower. A
// selected span (click) gets the flame graph of the samples that fell inside
// it (view-samples.ts: the report's rule) in place of the span flame graph,
// and a table of its functions by self time (the top frame's weight) with
// their total time (on the stack anywhere, once a sample).

export const SAMPLES_SCRIPT: string = `
  // CPU samples: columns, and per row its run [first, end) of samples in time order.
  function loadSamples(M) {
    var s = { row: col(M.row, Int32Array), ts: col(M.ts, Float64Array), stack: col(M.stack, Int32Array),
      weight: col(M.weight, Float64Array), parent: col(M.stackParent, Int32Array), frame: col(M.stackFrame, Int32Array),
      span: col(M.span, Int32Array), first: col(M.first, Int32Array), count: col(M.count, Int32Array),
      list: col(M.list, Int32Array), runs: {}, M: M };
    for (var j = 0; j < s.row.length; j++) {
      var rr = s.runs[s.row[j]];
      if (!rr) s.runs[s.row[j]] = rr = [j, j];
      rr[1] = j + 1;
    }
    return s;
  }
  var SM = D.samples ? loadSamples(D.samples) : null;
  var SAMPLE_H = 10;
  function fnOfNode(node) { return SM.M.frameFn[SM.frame[node]]; }
  function fnColor(fn) {
    var h = ((fn + 1) * 2246822519) >>> 0;
    return 'hsl(' + (h % 360) + ',62%,' + (42 + (h >>> 9) % 12) + '%)';
  }
  function frameText(f) {
    var url = SM.M.urls[SM.M.frameUrl[f]], line = SM.M.frameLine[f];
    return SM.M.fnNames[SM.M.frameFn[f]] + (url ? '  ' + url + (line ? ':' + line : '') : '');
  }

  // One row's strip at y top; returns [samples in view, ticks drawn].
  function drawSamples(r, top, pxPerNs) {
    var run = SM.runs[r];
    if (!run) return [0, 0];
    var a = run[0], b = run[1], ts = SM.ts, w = SM.weight;
    // First sample whose tick reaches the range (ticks are disjoint: a weight ends at the next sample).
    while (a < b) { var m = (a + b) >> 1; if (ts[m] + w[m] < view.t0) a = m + 1; else b = m; }
    var shown = 0, ticks = 0, lastPx = -1;
    for (var j = a; j < run[1] && ts[j] <= view.t1; j++) {
      shown++;
      var x0 = LABEL_W + (ts[j] - view.t0) * pxPerNs, x1 = x0 + w[j] * pxPerNs;
      if (x0 < LABEL_W) x0 = LABEL_W;
      if (x1 > W) x1 = W;
      if (x1 - x0 < 1) {
        var px = Math.floor(x0);
        if (px === lastPx) continue;
        lastPx = px; x0 = px; x1 = px + 1;
      } else lastPx = Math.floor(x1);
      ctx.fillStyle = fnColor(fnOfNode(SM.stack[j]));
      ctx.fillRect(x0, top, x1 - x0, SAMPLE_H);
      ticks++;
    }
    return [shown, ticks];
  }

  // The sample under (t, row r's strip), or -1: the last one at or before t whose tick reaches t.
  function sampleAt(r, t) {
    var run = SM && SM.runs[r];
    if (!run) return -1;
    var a = run[0], b = run[1];
    while (a < b) { var m = (a + b) >> 1; if (SM.ts[m] <= t) a = m + 1; else b = m; }
    var j = a - 1;
    if (j < run[0]) return -1;
    var slack = 2 * (view.t1 - view.t0) / (W - LABEL_W);
    return SM.ts[j] + SM.weight[j] + slack >= t ? j : -1;
  }
  function sampleTip(j) {
    var text = 'sample at ' + fmt(SM.ts[j]) + ', weight ' + fmt(SM.weight[j]);
    var n = 0;
    for (var node = SM.stack[j]; node >= 0 && n < 12; node = SM.parent[node], n++) text += '\\n' + frameText(SM.frame[node]);
    if (node >= 0) text += '\\n...';
    return text;
  }

  // The positions of the samples inside span k (view-samples.ts's per-span runs and lists).
  function samplesOfSpan(k) {
    if (!SM) return [];
    var a = 0, b = SM.span.length;
    while (a < b) { var m = (a + b) >> 1; if (SM.span[m] < k) a = m + 1; else b = m; }
    if (a >= SM.span.length || SM.span[a] !== k) return [];
    var f = SM.first[a], c = SM.count[a], out = [];
    for (var i = 0; i < c; i++) out.push(f >= 0 ? f + i : SM.list[-1 - f + i]);
    return out;
  }

  // The flame graph tree of some samples (flame.ts's shape: total per node,
  // children) and their functions' table. Weights in ns; when all are 0 (one
  // sample on its thread), a sample each.
  function sampleTree(list) {
    var nodes = SM.parent.length, total = new Float64Array(nodes), byWeight = false, i, j;
    for (i = 0; i < list.length; i++) if (SM.weight[list[i]] > 0) byWeight = true;
    var wOf = function (j) { return byWeight ? SM.weight[j] : 1; };
    for (i = 0; i < list.length; i++) total[SM.stack[list[i]]] += wOf(list[i]);
    for (var n = nodes - 1; n >= 0; n--) if (total[n] > 0 && SM.parent[n] >= 0) total[SM.parent[n]] += total[n];
    var kids = [], roots = [], sum = 0;
    for (n = 0; n < nodes; n++) {
      kids.push([]);
      if (total[n] <= 0) continue;
      if (SM.parent[n] < 0) { roots.push(n); sum += total[n]; } else kids[SM.parent[n]].push(n);
    }
    // Per frame: self, total (once a sample), samples on top.
    var fSelf = {}, fTotal = {}, fTop = {}, seen = {};
    for (i = 0; i < list.length; i++) {
      j = list[i];
      var top = SM.frame[SM.stack[j]];
      fSelf[top] = (fSelf[top] || 0) + wOf(j);
      fTop[top] = (fTop[top] || 0) + 1;
      seen = {};
      for (n = SM.stack[j]; n >= 0; n = SM.parent[n]) {
        var f = SM.frame[n];
        if (seen[f]) continue;
        seen[f] = true;
        fTotal[f] = (fTotal[f] || 0) + wOf(j);
      }
    }
    var rows = Object.keys(fTotal).map(function (f) {
      f = Number(f);
      return { frame: f, function: SM.M.fnNames[SM.M.frameFn[f]], self: fSelf[f] || 0, total: fTotal[f], samples: fTop[f] || 0 };
    });
    rows.sort(function (x, y) { return y.self - x.self || y.total - x.total || (x.function < y.function ? -1 : x.function > y.function ? 1 : 0); });
    return {
      total: total, kids: kids, roots: roots, sum: sum, rows: rows, byWeight: byWeight,
      label: function (n) { return SM.M.fnNames[fnOfNode(n)]; },
      colorOf: function (n) { return fnColor(fnOfNode(n)); },
      amount: function (v) { return byWeight ? fmt(v) : v + ' sample' + (v === 1 ? '' : 's'); }
    };
  }

  // The table of a selection's functions, in the element hot.
  function showTable(hot, title, tree) {
    hot.textContent = '';
    var h = document.createElement('div');
    h.className = 'title'; h.textContent = title; hot.appendChild(h);
    var table = document.createElement('table'), tr = document.createElement('tr');
    ['function', 'self', 'total', 'samples'].forEach(function (x) { var th = document.createElement('th'); th.textContent = x; tr.appendChild(th); });
    table.appendChild(tr);
    tree.rows.forEach(function (row) {
      tr = document.createElement('tr');
      tr.title = frameText(row.frame);
      [row.function, tree.amount(row.self), tree.amount(row.total), String(row.samples)].forEach(function (x) {
        var td = document.createElement('td'); td.textContent = x; tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    hot.appendChild(table);
  }
`;
