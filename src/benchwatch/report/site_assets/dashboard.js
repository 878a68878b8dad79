/* benchwatch dashboard: reads github-action-benchmark data.js files and draws SVG trends.
   No libraries. Every problem becomes a visible message; page errors are recorded in
   <body data-errors> so a headless browser can check them. */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var MAX_CHARTS = 24;
  var UNKNOWN_STACK = "#6b7280";
  var errors = [];
  var loading = null;

  function recordError(text) {
    errors.push(text);
    document.body.setAttribute("data-errors", JSON.stringify(errors));
  }

  window.addEventListener("error", function (event) {
    if (loading) {  // a data.js that does not parse or throws: that source is corrupt
      loading.broken = event.message || "script error";
      event.preventDefault();
      return;
    }
    recordError(String(event.message || event));
  });

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svgEl(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }

  function message(parent, text, isError) {
    parent.appendChild(el("div", {"class": isError ? "message error" : "message"}, text));
  }

  /* one colour per stack (the palette comes from Python: benchwatch.report.palette); the stack
     of each figure name comes from Python too (benchwatch.figure_key reads names, not this script):
     a name published after the site was built has none and is drawn in the unknown colour */
  var STACKS = {};
  function stackOf(name) {
    return Object.prototype.hasOwnProperty.call(STACKS, name) ? STACKS[name] : "";
  }

  function colorOf(name, palette) {
    return (palette || {})[stackOf(name)] || UNKNOWN_STACK;
  }

  function short(value) {
    if (!isFinite(value)) return String(value);
    var abs = Math.abs(value);
    if (abs >= 10000) return (value / 1000).toPrecision(3) + "k";
    return Number(value.toPrecision(4)).toString();
  }

  function isValidData(data) {
    if (!data || typeof data !== "object" || !data.entries || typeof data.entries !== "object") return false;
    return Object.keys(data.entries).every(function (name) { return Array.isArray(data.entries[name]); });
  }

  function loadSource(source, done) {
    window.BENCHMARK_DATA = undefined;
    loading = source;
    var script = document.createElement("script");
    function finish(problem) {
      loading = null;
      var data = window.BENCHMARK_DATA;
      window.BENCHMARK_DATA = undefined;
      if (problem) {
        source.state = "missing";
        source.error = source.path + ": " + problem;
      } else if (source.broken) {
        source.state = "corrupt";
        source.error = source.path + ": corrupt, it does not run as JavaScript (" + source.broken + ")";
      } else if (!isValidData(data)) {
        source.state = "corrupt";
        source.error = source.path + ": does not set window.BENCHMARK_DATA = {entries: {name: [...]}}";
      } else {
        source.state = "ok";
        source.data = data;
      }
      done();
    }
    script.onload = function () { finish(null); };
    script.onerror = function () { finish("not found (no trend data published there yet)"); };
    script.src = source.path;
    document.head.appendChild(script);
  }

  /* bench name -> {unit, bigger, points: [{value, commit, date, range}]} for one suite */
  function seriesOf(runs, bigger) {
    var series = {};
    runs.forEach(function (run) {
      (run.benches || []).forEach(function (bench) {
        if (typeof bench.value !== "number" || !isFinite(bench.value)) return;
        var s = series[bench.name] || (series[bench.name] = {unit: bench.unit || "", bigger: bigger, points: []});
        s.points.push({
          value: bench.value,
          commit: (run.commit && run.commit.id) ? String(run.commit.id).slice(0, 8) : "?",
          id: (run.commit && run.commit.id) ? String(run.commit.id) : "",
          message: (run.commit && run.commit.message) ? String(run.commit.message).split("\n")[0] : "",
          date: run.date ? new Date(run.date).toISOString().slice(0, 10) : "",
          range: bench.range || ""
        });
      });
    });
    return series;
  }

  function biggerIsBetter(runs) {
    return runs.some(function (run) { return /BiggerIsBetter/.test(run.tool || ""); });
  }

  function ratioText(mark) {
    if (typeof mark.ratio !== "number") return "?";
    var pct = (mark.ratio - 1) * 100;
    var interval = (typeof mark.low === "number" && typeof mark.high === "number")
      ? " [" + mark.low.toFixed(3) + ", " + mark.high.toFixed(3) + "]" : "";
    return (pct >= 0 ? "+" : "") + pct.toFixed(1) + "% (" + mark.ratio.toFixed(3) + "x" + interval + ")";
  }

  function markText(mark) {
    var status = mark.acknowledged ? "acknowledged: " + mark.acknowledged : (mark.alert ? "ALERT" : mark.kind);
    return "change point " + String(mark.before.commit).slice(0, 8) + " \u2192 " + String(mark.after.commit).slice(0, 8) +
      ": " + ratioText(mark) + ", " + mark.kind + " (" + status + ")";
  }

  /* a dashed line before the first point of the new level (or at the one point of a
     (vs parent) change), found by its full commit id; the tooltip says range and size */
  function drawMarks(svg, series, marks, px, top, bottom) {
    (marks || []).forEach(function (mark) {
      var at = -1;
      series.points.forEach(function (p, i) { if (p.id && p.id === mark.after.commit) at = i; });
      if (at < 0) return;
      var x = at > 0 && mark.mode !== "spike" ? (px(at - 1) + px(at)) / 2 : px(at);
      var color = mark.acknowledged ? "#888" : (mark.kind === "regression" ? "#d62728" : "#2ca02c");
      var group = svgEl("g", {"class": "change-point", "data-commit": mark.after.commit, "data-kind": mark.kind,
                              "data-acknowledged": mark.acknowledged ? "1" : "0"});
      group.appendChild(svgEl("line", {x1: x, x2: x, y1: top, y2: bottom, stroke: color, "stroke-width": 1.5,
                                       "stroke-dasharray": "4 3"}));
      var label = svgEl("text", {x: x + 3, y: top + 10, "font-size": 11, fill: color});
      label.textContent = (mark.acknowledged ? "ack " : "") + (typeof mark.ratio === "number" ? ((mark.ratio - 1) * 100).toFixed(1) + "%" : "?");
      group.appendChild(label);
      var tip = svgEl("title", {});
      tip.textContent = markText(mark);
      group.appendChild(tip);
      svg.appendChild(group);
    });
  }

  function trendChart(name, series, color, marks) {
    var box = el("div", {"class": "trend", "data-rendered": "1", "data-bench": name});
    box.appendChild(el("h4", {}, name + " (" + series.unit + ", " + (series.bigger ? "higher" : "lower") + " is better)"));
    var w = 360, h = 160, left = 48, right = 8, top = 8, bottom = 24;
    var values = series.points.map(function (p) { return p.value; });
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
    if (hi === lo) { hi = hi + Math.abs(hi) * 0.05 + 1e-9; lo = lo - Math.abs(lo) * 0.05; }
    var n = series.points.length;
    function px(i) { return left + (n === 1 ? (w - left - right) / 2 : i * (w - left - right) / (n - 1)); }
    function py(v) { return top + (h - top - bottom) * (1 - (v - lo) / (hi - lo)); }
    var svg = svgEl("svg", {width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img", fill: "currentColor"});
    [lo, hi].forEach(function (v) {
      svg.appendChild(svgEl("line", {x1: left, x2: w - right, y1: py(v), y2: py(v), stroke: "currentColor", "stroke-opacity": 0.15}));
      var label = svgEl("text", {x: left - 4, y: py(v) + 4, "font-size": 11, "text-anchor": "end"});
      label.textContent = short(v);
      svg.appendChild(label);
    });
    [[0, "start"], [n - 1, "end"]].forEach(function (pair) {
      var label = svgEl("text", {x: px(pair[0]), y: h - 6, "font-size": 11, "text-anchor": n === 1 ? "middle" : pair[1]});
      label.textContent = series.points[pair[0]].date;
      svg.appendChild(label);
    });
    var d = series.points.map(function (p, i) { return (i ? "L" : "M") + px(i).toFixed(1) + "," + py(p.value).toFixed(1); }).join(" ");
    svg.appendChild(svgEl("path", {d: d, fill: "none", stroke: color, "stroke-width": 2, "data-stack": stackOf(name)}));
    series.points.forEach(function (p, i) {
      var dot = svgEl("circle", {cx: px(i), cy: py(p.value), r: 2.5, fill: color, "data-stack": stackOf(name)});
      var tip = svgEl("title", {});
      tip.textContent = p.date + " " + p.commit + " " + p.message + ": " + short(p.value) + " " + series.unit + " " + p.range;
      dot.appendChild(tip);
      svg.appendChild(dot);
    });
    drawMarks(svg, series, marks, px, top, h - bottom);
    box.appendChild(svg);
    return box;
  }

  function marksBySeries(changes) {
    var found = {};
    (changes || []).forEach(function (mark) {
      var key = mark.suite + "\u0000" + mark.name;
      (found[key] = found[key] || []).push(mark);
    });
    return found;
  }

  function commitLink(point) {
    var text = String(point.commit || "?").slice(0, 8);
    if (/^https?:\/\//.test(point.url || "")) return el("a", {href: point.url}, text);
    return el("code", {}, text);
  }

  /* the most recent change points first, with links to the commits when data.js has them */
  function changeTable(changes, target) {
    if (!target || changes === null || changes === undefined) return;
    target.textContent = "";
    target.setAttribute("data-state", "ok");
    if (!changes.length) { message(target, "no change points in the published trends", false); return; }
    var table = el("table", {"class": "change-points"});
    var head = el("tr", {});
    ["series", "between", "change", "status"].forEach(function (t) { head.appendChild(el("th", {}, t)); });
    table.appendChild(head);
    changes.slice(0, 30).forEach(function (mark) {
      var row = el("tr", {"data-commit": mark.after.commit, "class": mark.kind});
      row.appendChild(el("td", {}, mark.name + " (" + mark.suite + ")"));
      var between = el("td", {});
      between.appendChild(commitLink(mark.before));
      between.appendChild(document.createTextNode(" \u2192 "));
      between.appendChild(commitLink(mark.after));
      if (mark.after.date) between.appendChild(document.createTextNode(" (" + String(mark.after.date).slice(0, 10) + ")"));
      row.appendChild(between);
      row.appendChild(el("td", {}, ratioText(mark)));
      row.appendChild(el("td", {}, mark.acknowledged ? "acknowledged: " + mark.acknowledged
                                    : mark.kind + (mark.alert ? ", alert" : "")));
      table.appendChild(row);
    });
    var box = el("div", {"class": "scroll", tabindex: "0", role: "region", "aria-label": "change points"});
    box.appendChild(table);
    target.appendChild(box);
    target.appendChild(el("div", {"class": "scroll-hint"}, "\u2190 scroll sideways for more columns \u2192"));
    if (window.bwMarkScrolls) window.bwMarkScrolls();
  }

  function renderSource(source, container, filter, marks, palette) {
    var section = el("section", {"class": "source", "data-source": source.path, "data-source-state": source.state});
    section.appendChild(el("h3", {}, source.label));
    container.appendChild(section);
    if (source.state !== "ok") {
      message(section, source.error, source.state === "corrupt");
      return;
    }
    var data = source.data;
    if (data.lastUpdate) section.appendChild(el("p", {"class": "note"}, "last update " + new Date(data.lastUpdate).toISOString()));
    var suites = Object.keys(data.entries);
    if (!suites.length) message(section, source.path + ": no benchmark entries yet", false);
    suites.forEach(function (suite) {
      var runs = data.entries[suite];
      var series = seriesOf(runs, biggerIsBetter(runs));
      var names = Object.keys(series).sort();
      var chosen = names.filter(function (name) { return name.toLowerCase().indexOf(filter) !== -1; });
      section.appendChild(el("h4", {}, suite + ": " + runs.length + " runs, showing " +
        Math.min(chosen.length, MAX_CHARTS) + " of " + names.length + " figures" +
        (filter ? " matching \u201c" + filter + "\u201d" : "")));
      var charts = el("div", {"class": "charts"});
      chosen.slice(0, MAX_CHARTS).forEach(function (name) {
        charts.appendChild(trendChart(name, series[name], colorOf(name, palette), marks[suite + "\u0000" + name]));
      });
      section.appendChild(charts);
    });
  }

  /* a night's move is coloured only when `benchwatch changes` found a change point there:
     two separate nights differ by the host's speed as much as by the releases */
  function nightlyStatus(sources, target, marks) {
    if (!target) return;
    var nightly = sources.filter(function (s) { return s.nightly; })[0];
    target.textContent = "";
    if (!nightly || nightly.state !== "ok") {
      message(target, nightly ? nightly.error : "no nightly data configured", nightly && nightly.state === "corrupt");
      target.setAttribute("data-state", nightly ? nightly.state : "missing");
      return;
    }
    var changes = [], last = null;
    Object.keys(nightly.data.entries).forEach(function (suite) {
      var runs = nightly.data.entries[suite];
      if (!runs.length) return;
      var end = runs[runs.length - 1];
      if (!last || (end.date || 0) > (last.date || 0)) last = end;
      if (runs.length < 2) return;
      var bigger = biggerIsBetter(runs), before = {};
      (runs[runs.length - 2].benches || []).forEach(function (b) { before[b.name] = b.value; });
      (end.benches || []).forEach(function (b) {
        var prev = before[b.name];
        if (typeof prev !== "number" || prev <= 0 || !(b.value > 0)) return;
        var good = bigger ? b.value / prev : prev / b.value;
        var found = (marks[suite + "\u0000" + b.name] || []).filter(function (m) {
          return m.after && m.after.commit === (end.commit || {}).id;
        })[0];
        changes.push({name: b.name, good: good, mark: found});
      });
    });
    target.setAttribute("data-state", "ok");
    if (!last) { message(target, "the nightly trend has no runs yet", false); return; }
    var commit = last.commit || {};
    target.appendChild(el("p", {}, "Last nightly: " + (last.date ? new Date(last.date).toISOString() : "?") +
      ", commit " + String(commit.id || "?").slice(0, 10) + " " + String(commit.message || "").split("\n")[0]));
    changes.sort(function (a, b) { return Math.abs(Math.log(b.good)) - Math.abs(Math.log(a.good)); });
    if (!changes.length) { target.appendChild(el("p", {"class": "note"}, "no earlier nightly run to compare with")); return; }
    var list = el("ul", {});
    changes.slice(0, 5).forEach(function (c) {
      var text = c.good >= 1 ? c.good.toFixed(2) + "x faster" : (1 / c.good).toFixed(2) + "x slower";
      var verdict = c.mark ? " \u2014 change point (" + (c.mark.acknowledged ? "acknowledged: " + c.mark.acknowledged : c.mark.kind) + ")"
                           : " \u2014 no change point: within the night-to-night noise";
      var item = el("li", {"data-judged": c.mark ? "1" : "0"}, c.name + ": " + text + " than the night before" + verdict);
      if (c.mark && !c.mark.acknowledged) item.className = c.mark.kind === "regression" ? "worse" : "better";
      list.appendChild(item);
    });
    target.appendChild(el("p", {}, "Largest moves since the previous nightly run:"));
    target.appendChild(list);
  }

  function start() {
    document.body.setAttribute("data-errors", "[]");
    var config = JSON.parse(document.getElementById("bw-sources").textContent);
    STACKS = config.stacks || {};
    var sources = config.sources;
    var container = document.getElementById("trends");
    var input = document.getElementById("trend-filter");
    input.value = config.filter || "";
    var queue = sources.slice();
    var marks = marksBySeries(config.changes);
    function draw() {
      container.textContent = "";
      var filter = input.value.trim().toLowerCase();
      if (!sources.length) message(container, "no data.js files found: trends appear after the first publish", false);
      sources.forEach(function (source) { renderSource(source, container, filter, marks, config.palette); });
      changeTable(config.changes, document.getElementById("change-points"));
      nightlyStatus(sources, document.getElementById("nightly-status"), marks);
      document.body.setAttribute("data-dashboard", "done");
    }
    function next() {
      if (!queue.length) {
        draw();
        input.addEventListener("input", draw);
        return;
      }
      loadSource(queue.shift(), next);
    }
    next();
  }

  try {
    start();
  } catch (exc) {
    recordError(String(exc && exc.stack || exc));
    var target = document.getElementById("trends");
    if (target) message(target, "dashboard failed: " + exc, true);
  }
})();
