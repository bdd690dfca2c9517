// llmbench report page: draws the page's data (the JSON in #data, docs/report.md) with uPlot.
// No network: everything the page needs is inlined.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  var root = document.getElementById("root");

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, tag, attrs, text) { var e = el(tag, attrs, text); parent.appendChild(e); return e; }
  // num:begin
  // Numbers for people, by internal/numfmt's rules (Format): fixed-point, four
  // significant digits but never fewer than the units, at most 12 decimals, trailing zeros
  // dropped, thousands grouped; "–" for no value. TestPageNumMatchesNumfmt runs this
  // function against numfmt.Format.
  function num(v) {
    if (v === null || v === undefined || typeof v !== "number" || isNaN(v)) return "–";
    if (v === Infinity) return "+Inf";
    if (v === -Infinity) return "-Inf";
    if (v === 0) return "0";
    var dec = Math.max(0, Math.min(12, 3 - Math.floor(Math.log10(Math.abs(v)))));
    var s = Math.abs(v) >= 1e21 ? BigInt(v).toString() : v.toFixed(dec);
    if (s.indexOf(".") >= 0) s = s.replace(/0+$/, "").replace(/\.$/, "");
    var neg = s.charAt(0) === "-";
    if (neg) s = s.slice(1);
    var parts = s.split("."), ip = parts[0], out = "";
    for (var i = 0; i < ip.length; i++) {
      if (i > 0 && (ip.length - i) % 3 === 0) out += ",";
      out += ip.charAt(i);
    }
    if (parts.length > 1) out += "." + parts[1];
    return (neg && out !== "0" ? "-" : "") + out;
  }
  // num:end
  function table(parent, header, rows, cls) {
    var t = add(parent, "table", cls ? { "class": cls } : {});
    var tr = add(add(t, "thead"), "tr");
    header.forEach(function (h) { add(tr, "th", {}, h); });
    var tb = add(t, "tbody");
    rows.forEach(function (r) {
      var row = add(tb, "tr");
      r.forEach(function (c) {
        if (c && typeof c === "object") add(row, "td", c.attrs || {}, c.text); else add(row, "td", {}, c);
      });
    });
    return t;
  }
  function section(title, id) { var s = add(root, "section", { id: id }); add(s, "h2", {}, title); return s; }
  function na(parent, text) { add(parent, "p", { "class": "na" }, text); }

  // Charts: time charts share one x range and one cursor.
  var timeRange = null;
  (D.charts || []).forEach(function (c) {
    if (!c.time) return;
    var x = c.data[0];
    if (!x.length) return;
    var lo = x[0], hi = x[x.length - 1];
    timeRange = timeRange ? [Math.min(timeRange[0], lo), Math.max(timeRange[1], hi)] : [lo, hi];
  });
  if (D.run && D.run.duration_s > 0 && timeRange) timeRange[1] = Math.max(timeRange[1], D.run.duration_s);

  function quantileLabel(x) {
    var q = 100 * (1 - Math.pow(10, -x));
    return q.toFixed(Math.max(0, Math.round(x) - 2)) + "%";
  }
  var drawn = 0, charts = [];
  function chart(parent, c) {
    var fig = add(parent, "figure", { "class": "chart", id: "chart-" + c.id });
    add(fig, "h3", {}, c.title);
    var box = add(fig, "div", { "class": "plot" });
    add(fig, "figcaption", {}, c.caption);
    var plot = draw(box, c, c);
    if (c.raw) {
      // The raw series behind the bins, one click away, on the same time axis.
      var raw = false, btn = add(fig, "button", { type: "button", "class": "raw-toggle" }, "show " + c.raw.button);
      btn.addEventListener("click", function () {
        raw = !raw;
        var at = charts.indexOf(plot);
        plot.destroy();
        plot = draw(box, c, raw ? c.raw : c, at);
        btn.textContent = raw ? "show the bins" : "show " + c.raw.button;
      });
    }
  }
  // draw draws view (c itself, or c.raw: its y, series and data) in box with c's x axis and
  // marks; at is the place in charts of the plot it replaces.
  function draw(box, c, view, at) {
    var series = [{ label: c.x.label }];
    view.series.forEach(function (s, i) {
      var color = s.color || palette[i % palette.length];
      var o = { label: s.label, stroke: color, width: 1.5, spanGaps: true };
      if (s.style === "points") {
        o.paths = function () { return null; };
        o.points = { show: true, size: 4, stroke: color, fill: color };
      } else if (s.style === "step") {
        o.paths = uPlot.paths.stepped({ align: 1 });
        o.points = { show: false };
      } else if (s.style === "bars") {
        o.paths = uPlot.paths.bars({ size: [0.9, 60], align: view.series.length > 1 ? (i === 0 ? -1 : 1) : 0 });
        o.fill = color + "99";
        o.points = { show: false };
      } else if (s.style === "stack") {
        o.paths = uPlot.paths.bars({ size: [0.5, 48], align: 0 });
        o.fill = color;
        o.points = { show: false };
      } else if (s.style === "linepoints") {
        o.points = { show: true, size: 6, stroke: color, fill: color };
      } else {
        o.points = { show: false };
      }
      if (s.y2) o.scale = "y2";
      series.push(o);
    });
    var xScale = { time: false };
    var xAxis = { label: c.x.label };
    if (c.x.kind === "quantile") {
      var top = c.data[0][c.data[0].length - 1];
      xScale.range = [0, top];
      xAxis.splits = function () { var s = [0, Math.log10(2)]; for (var k = 1; k <= Math.floor(top + 1e-9); k++) s.push(k); return s; };
      xAxis.values = function (u, splits) { return splits.map(quantileLabel); };
    } else if (c.time && timeRange) {
      xScale.range = [timeRange[0], timeRange[1]];
    }
    var scales = { x: xScale }, axes = [xAxis, { label: view.y.label, size: 60 }];
    if (c.y2) {
      scales.y2 = { auto: true };
      axes.push({ scale: "y2", side: 1, label: c.y2.label, size: 60, grid: { show: false } });
    }
    var opts = {
      width: Math.max(320, Math.min(560, box.clientWidth || 560)), height: 260,
      scales: scales,
      axes: axes,
      series: series,
      legend: { show: true },
      cursor: c.time ? { sync: { key: "time" } } : {},
      hooks: {
        draw: [function (u) {
          drawn++;
          (c.marks || []).forEach(function (m) {
            var px = u.valToPos(m.x, "x", true);
            var ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = "#555"; ctx.setLineDash([4, 4]); ctx.lineWidth = 1;
            ctx.beginPath(); ctx.moveTo(px, u.bbox.top); ctx.lineTo(px, u.bbox.top + u.bbox.height); ctx.stroke();
            ctx.fillStyle = "#333"; ctx.font = (11 * devicePixelRatio) + "px sans-serif";
            ctx.fillText(m.label, px + 3, u.bbox.top + 12 * devicePixelRatio);
            ctx.restore();
          });
        }]
      }
    };
    var u = new uPlot(opts, view.data, box);
    if (at === undefined || at < 0) charts.push(u); else charts[at] = u;
    return u;
  }

  // Header.
  document.title = D.title;
  add(root, "h1", {}, D.title);
  try {
    if (D.kind === "run") runPage(); else comparePage();
  } catch (e) {
    document.body.setAttribute("data-ready", "error"); // the tests stop waiting at once
    throw e;
  }
  document.body.setAttribute("data-charts", String(charts.length));
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-ready", "1");

  function chartsBySection(list) {
    var by = {}, order = [];
    list.forEach(function (c) { if (!by[c.section]) { by[c.section] = []; order.push(c.section); } by[c.section].push(c); });
    order.forEach(function (name, i) {
      var s = section(name, "sec-" + i);
      var grid = add(s, "div", { "class": "grid" });
      by[name].forEach(function (c) { chart(grid, c); });
    });
  }

  function checkCards(parent, checks) {
    var row = add(parent, "div", { "class": "checks" });
    checks.forEach(function (c) {
      var cls = c.status === "validated" ? "ok" : c.status === "failed" ? "bad" : "unk";
      var card = add(row, "div", { "class": "check " + cls });
      add(card, "div", { "class": "check-name" }, c.name + ": " + c.status);
      add(card, "div", { "class": "check-evidence" }, c.evidence);
      var figs = Object.keys(c.figures || {}).sort();
      if (figs.length) add(card, "div", { "class": "check-figures" }, figs.map(function (k) { return k + " = " + num(c.figures[k]); }).join(", "));
    });
  }

  function runPage() {
    var r = D.run;
    add(root, "p", { "class": "meta" }, [r.model && ("model " + r.model), r.endpoint && ("endpoint " + r.endpoint),
      r.streaming ? "streaming" : "non-streaming", r.concurrency ? ("concurrency " + r.concurrency) : null,
      r.offered_rate ? ("offered " + num(r.offered_rate) + " req/s") : null, r.start, num(r.duration_s) + " s",
      "plan " + (r.plan_hash || "").slice(0, 12), r.tool].filter(Boolean).join(" · "));
    var v = section("Verdict", "verdict-section");
    checkCards(v, D.checks);
    if (D.trustworthy !== null && D.trustworthy !== undefined)
      add(v, "p", { id: "trustworthy", "class": D.trustworthy ? "ok-text" : "bad-text" }, D.trustworthy ? "Trustworthy: the generator, the shape and the thresholds were all validated." : "Not trustworthy: at least one of the three validations did not pass.");
    add(v, "p", { id: "verdict", "class": "verdict" }, D.verdict);
    if (D.gates.length) {
      var ul = add(v, "ul", { "class": "gates" });
      D.gates.forEach(function (g) { add(ul, "li", { "class": g.ok ? "ok-text" : "bad-text" }, g.text); });
    }
    var t = section("Metrics", "metrics");
    function metricRows(rows) {
      return rows.map(function (row) {
        return row.cells.map(function (c, i) {
          if (i === 0) return { text: c + (row.note ? " *" : ""), attrs: { title: row.definition || "", "class": "metric" } };
          // A figure with a note is marked where it is shown; the note is under the table.
          return i === 2 && row.note ? { text: c + " *", attrs: { title: row.note, "class": "noted" } } : c;
        });
      });
    }
    function rowNotes(rows) {
      return rows.filter(function (r) { return r.note; }).map(function (r) { return "* " + r.cells[0] + ": " + r.note + "."; });
    }
    var header = ["Metric", "avg", "min", "max", "p99", "p90", "p50", "std"];
    if (D.selection) add(t, "p", { id: "selection" }, "Requests: " + D.selection);
    var groups = D.groups || [];
    var groupLine = null, sel = null;
    if (groups.length) {
      // --group-by: a selector switches the table between all requests and each group.
      var lab = add(t, "label", {}, "Group: ");
      sel = add(lab, "select", { id: "group-select" });
      add(sel, "option", { value: "-1" }, "all selected requests");
      groups.forEach(function (g, i) { add(sel, "option", { value: String(i) }, g.name); });
    }
    var mt = table(t, header, metricRows(D.table), "metrics");
    rowNotes(D.table).forEach(function (n) { add(t, "p", { "class": "row-note" }, n); });
    if (groups.length) {
      groupLine = add(t, "p", { id: "group-line" }, "");
      sel.addEventListener("change", function () {
        var i = Number(sel.value);
        var next = table(t, header, metricRows(i < 0 ? D.table : groups[i].table), "metrics");
        t.replaceChild(next, mt);
        mt = next;
        groupLine.textContent = i < 0 ? "" : groups[i].line;
      });
    }
    add(t, "p", { "class": "hint" }, "Hover a metric's name for its definition (docs/metrics.md).");
    var e = section("Errors", "errors");
    if (!D.errors.kinds.length) add(e, "p", {}, "No errors in " + D.errors.profile + " profile requests.");
    else {
      add(e, "p", {}, D.errors.total + " of " + D.errors.profile + " profile requests failed. Failed requests are drawn in red on the timelines.");
      table(e, ["kind", "code", "count", "first message"], D.errors.kinds.map(function (k) { return [k.kind, k.code || "", k.count, k.message]; }));
    }
    if (D.notes.length) { var n = section("Notes", "notes"); var ul2 = add(n, "ul"); D.notes.forEach(function (x) { add(ul2, "li", {}, x); }); }
    if (D.sessions) sessions(D.sessions);
    chartsBySection(D.charts);
    var g = section("GPU telemetry and server metrics", "telemetry");
    if (!D.gpus.length) na(g, "GPU telemetry: not available (the run recorded no GPU samples).");
    else table(g, ["GPU", "power W avg/max", "util % avg/max", "memory GB max", "SM clock MHz avg", "energy J"], D.gpus.map(function (x) {
      function am(s) { return s ? num(s.avg) + " / " + num(s.max) : "–"; }
      return [x.name, am(x.power_w), am(x.utilization_pct), x.memory_used_gb ? num(x.memory_used_gb.max) : "–", x.sm_clock_mhz ? num(x.sm_clock_mhz.avg) : "–", num(x.energy_j)];
    }));
    if (!D.server.length) na(g, "Server metrics: " + D.server_note);
    else table(g, ["metric", "unit", "kind", "source", "avg", "min", "max", "p50", "p99", "rate"], D.server.map(function (m) {
      // A statistic the metric's kind does not have is null: "–", never 0.
      return m.present ? [m.name, m.unit, m.kind, m.source, num(m.avg), num(m.min), num(m.max), num(m.p50), num(m.p99), num(m.rate)] : [m.name, m.unit, m.kind, m.source, "not available", "–", "–", "–", "–", "–"];
    }));
    if (D.slices) { var sl = section("Time slice table", "slice-table"); table(sl, D.slices.header, D.slices.rows); }
  }

  // The sessions of an agentic run: analyze's lines, then a swim lane: one row per agent of
  // each session, subagents indented under their parent, a bar per request (red: failed).
  function sessions(S) {
    var sec = section("Sessions", "sessions");
    S.lines.forEach(function (l) { add(sec, "p", {}, l); });
    if (S.note) add(sec, "p", { "class": "hint" }, "Swim lane: " + S.note + ".");
    if (!S.rows.length) return;
    var ns = "http://www.w3.org/2000/svg", labelW = 220, w = 1000, rowH = 16;
    var lo = S.span[0], hi = S.span[1] > S.span[0] ? S.span[1] : S.span[0] + 1;
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", String(labelW + w + 10));
    svg.setAttribute("height", String(S.rows.length * rowH + 24));
    svg.setAttribute("class", "lanes");
    function node(tag, attrs, text) {
      var e = document.createElementNS(ns, tag);
      for (var k in attrs) e.setAttribute(k, String(attrs[k]));
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    }
    function x(t) { return labelW + (t - lo) / (hi - lo) * w; }
    S.rows.forEach(function (r, i) {
      var y = i * rowH;
      if (r.depth === 0 && i > 0) node("line", { x1: 0, x2: labelW + w, y1: y, y2: y, stroke: "#ddd" });
      node("text", { x: 4 + 10 * r.depth, y: y + rowH - 4, "font-size": 11, fill: "#333" }, r.label.trim());
      r.spans.forEach(function (s) {
        var end = isFinite(s[1]) ? s[1] : hi;
        var rect = node("rect", { x: x(s[0]), y: y + 2 + 2 * Math.min(r.depth, 3), width: Math.max(1, x(end) - x(s[0])),
          height: rowH - 4 - 4 * Math.min(r.depth, 3) / 2, fill: s[2] ? palette[r.depth % palette.length] : "#d62728", "class": "req" });
        var tip = document.createElementNS(ns, "title");
        tip.textContent = r.label.trim() + ": " + num(s[0]) + " s to " + (isFinite(s[1]) ? num(s[1]) + " s" : "(no end)");
        rect.appendChild(tip);
      });
    });
    var yAxis = S.rows.length * rowH + 14;
    node("text", { x: labelW, y: yAxis, "font-size": 11, fill: "#555" }, num(lo) + " s");
    node("text", { x: labelW + w - 40, y: yAxis, "font-size": 11, fill: "#555" }, num(hi) + " s");
    sec.appendChild(svg);
  }

  function comparePage() {
    var w = section("Warnings", "warnings");
    if (!D.warnings.length) add(w, "p", {}, "None: every client kept its schedule, and the runs sent the same requests to the same endpoint and model (their plans may differ in the load they offer, by design).");
    else { var ul = add(w, "ul", { id: "warning-list" }); D.warnings.forEach(function (x) { add(ul, "li", { "class": "bad-text" }, x); }); }
    var r = section("Runs", "runs");
    // The load: concurrency for a closed loop, the offered rate for an open one, both for a
    // rate with a concurrency bound; "–" where a run has neither.
    function load(x) {
      var parts = [];
      if (x.concurrency) parts.push("concurrency " + num(x.concurrency));
      if (x.offered_rate) parts.push(num(x.offered_rate) + " req/s offered");
      return parts.length ? parts.join(", ") : "–";
    }
    table(r, ["run", "plan", "load", "requests", "completed", "errors", "output tokens/s", "verdict"], D.runs.map(function (x) {
      return [x.name, (x.plan_hash || "").slice(0, 12), load(x), num(x.requests), num(x.completed), num(x.errors), num(x.output_token_throughput),
        { text: x.verdict, attrs: { "class": x.saturated ? "bad-text verdict" : "verdict" } }];
    }));
    if (D.metrics.length) {
      var m = section("Differences against " + D.baseline, "differences");
      var rows = [];
      D.metrics.forEach(function (mt) {
        mt.diffs.forEach(function (d) {
          var b = mt.runs[0], o = mt.runs[d.run];
          function pct(v) { return v === null || v === undefined ? "–" : (v > 0 && num(v) !== "0" ? "+" : "") + num(v) + " %"; }
          rows.push([mt.tag + " (" + mt.unit + ")", D.runs[d.run].name, num(b.p50) + " → " + num(o.p50), num(b.p99) + " → " + num(o.p99),
            (d.median_diff > 0 && num(d.median_diff) !== "0" ? "+" : "") + num(d.median_diff) + " (" + pct(d.median_diff_pct) + ") [" + num(d.median_ci[0]) + ", " + num(d.median_ci[1]) + "]",
            (d.p99_diff > 0 && num(d.p99_diff) !== "0" ? "+" : "") + num(d.p99_diff) + " (" + pct(d.p99_diff_pct) + ") [" + num(d.p99_ci[0]) + ", " + num(d.p99_ci[1]) + "]",
            { text: d.finding, attrs: { "class": d.regression || (d.significant && d.worse) ? "bad-text sig finding" : d.significant ? "sig finding" : "finding" } }]);
        });
      });
      table(m, ["metric", "run", "p50", "p99", "median diff (%) [95% CI]", "p99 diff (%) [95% CI]", "finding"], rows, "diffs");
      add(m, "p", { "class": "hint" }, "Significant: Mann–Whitney U p < " + D.alpha + ", the bootstrap 95% CI of the difference of medians excludes 0, and the medians differ by at least " + D.min_effect_pct + "%.");
      if (D.regressions.length) {
        var rl = add(m, "ul", { id: "regressions" });
        D.regressions.forEach(function (x) { add(rl, "li", { "class": "bad-text" }, "Regression: " + x.reason); });
      }
    }
    if (D.sweep) {
      var sw = section("Sweep over " + D.sweep.parameter.replace("_", " "), "sweep");
      table(sw, [D.sweep.parameter, "point", "output tokens/s", "per GPU", "tokens/s/user avg", "tokens/s/user p50", "requests/s", "TTFT p50 (ms)", "TTFT p99 (ms)", "Pareto"], D.sweep.points.map(function (p) {
        return [num(p.value), p.name + (p.failed ? " (failed)" : p.saturated ? " (saturated)" : ""), num(p.output_token_throughput), num(p.output_token_throughput_per_gpu),
          num(p.output_token_throughput_per_user_avg), num(p.output_token_throughput_per_user_p50), num(p.request_throughput),
          num(p.time_to_first_token_p50), num(p.time_to_first_token_p99), p.pareto ? "yes" : "–"];
      }));
      if (D.sweep.pareto_objectives.length)
        add(sw, "p", { "class": "hint" }, "Pareto set on " + D.sweep.pareto_objectives.join(" and ") + ", among the valid points: the values of the sweep's JSON (pareto_optimal).");
      if (D.sweep.best_configurations.length)
        table(sw, ["best configuration", D.sweep.parameter, "point", "metric", "value"], D.sweep.best_configurations.map(function (b) {
          return [b.name, num(b.value), b.point, b.metric, num(b.result) + (b.unit ? " " + b.unit : "")];
        }), "best");
    }
    chartsBySection(D.charts);
  }
})();
