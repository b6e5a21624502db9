// The placement explorer (kb/sitegen/explorer.py): looks results up, never computes them.
// `kb build` evaluated every configuration the controls can select with kb.plan (the same
// evaluator as `kb plan --format json`) and wrote one data file per model
// (window.KB_EXPLORE_DATA[model], loaded on demand by a <script> of the site's own, so it
// works from file:// under the site's CSP). This script only reads the chosen key and
// renders what the build wrote: the figures' exact values (data-exact) and kb's own text.
(function () {
  "use strict";
  var root = document.getElementById("explorer");
  if (!root) { return; }
  var menus = JSON.parse(document.getElementById("explore-menus").textContent);
  var base = root.getAttribute("data-root") || "";
  var form = document.getElementById("explore-form");
  var out = document.getElementById("explore-result");
  var status = document.getElementById("explore-status");
  var loading = Object.create(null);
  var FIGURE_INDEX = {};
  menus.figures.forEach(function (f, i) { FIGURE_INDEX[f[0]] = i; });
  window.KB_EXPLORE_DATA = window.KB_EXPLORE_DATA || {};

  function field(name) { return form.elements.namedItem(name); }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function link(id, text) {
    return el("a", { href: base + "records/" + id + ".html" }, text || id);
  }

  function badge(basis) {
    return el("span", { "class": "badge basis-" + basis }, basis);
  }

  // ---- the state of the controls <-> the URL's hash (a configuration can be linked) ----------
  var NAMES = ["model", "hardware", "shape", "degrees", "batch", "lengths", "engine"];

  function readHash() {
    var found = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("=");
      if (kv.length === 2 && NAMES.indexOf(kv[0]) >= 0) { found[kv[0]] = decodeURIComponent(kv[1]); }
    });
    return found;
  }

  function writeHash() {
    var parts = NAMES.map(function (n) { return n + "=" + encodeURIComponent(field(n).value); });
    if (history.replaceState) { history.replaceState(null, "", "#" + parts.join("&")); }
  }

  function setOptions(select, options, wanted) {
    var keep = wanted !== undefined ? wanted : select.value;
    select.textContent = "";
    options.forEach(function (o) { select.appendChild(el("option", { value: o[0] }, o[1])); });
    if (options.some(function (o) { return o[0] === keep; })) { select.value = keep; }
  }

  // ---- data files ------------------------------------------------------------------------------
  function withData(model, then) {
    var data = window.KB_EXPLORE_DATA[model];
    if (data) { then(data); return; }
    var file = menus.files[model];
    if (!file) { then(null); return; }
    status.textContent = "Loading the results for " + model + "\u2026";
    if (!loading[model]) {
      loading[model] = [];
      var script = el("script", { src: base + file });
      script.addEventListener("load", function () {
        var waiting = loading[model]; delete loading[model];
        waiting.forEach(function (f) { f(window.KB_EXPLORE_DATA[model] || null); });
      });
      script.addEventListener("error", function () {
        var waiting = loading[model]; delete loading[model];
        waiting.forEach(function (f) { f(null); });
      });
      document.head.appendChild(script);
    }
    loading[model].push(then);
  }

  // The mappings kb plan enumerated for the chosen question (a batch smaller than dp
  // leaves some out): those with a result under the other controls' values.
  function degreeOptions(data) {
    var key = field("hardware").value + "|" + field("shape").value;
    return ((data && data.options[key]) || []).filter(function (o) {
      return !!data.results[resultKey(o[0])];
    }).map(function (o) { return [o[0], o[1]]; });
  }

  var current = null;  // the chosen model's data
  function currentDegrees() {
    var key = field("hardware").value + "|" + field("shape").value, name = field("degrees").value;
    var found = ((current && current.options[key]) || []).filter(function (o) { return o[0] === name; });
    return found.length ? found[0][2] : {};
  }

  function resultKey(option) {
    return [field("hardware").value, field("shape").value, option || field("degrees").value,
      field("batch").value, field("lengths").value, field("engine").value].join("|");
  }

  // ---- rendering -------------------------------------------------------------------------------
  function figureRow(tbody, label, figure, name) {
    var tr = el("tr");
    tr.appendChild(el("th", { scope: "row" }, label));
    var td = el("td", { "class": "num", "data-figure": name, "data-exact": figure ? figure[0] : "" },
      figure ? figure[1] : "n/a");
    tr.appendChild(td);
    tbody.appendChild(tr);
  }

  function section(title, id) {
    var s = el("section", { "aria-labelledby": id });
    s.appendChild(el("h2", { id: id }, title));
    return s;
  }

  function render(data, key) {
    current = data;
    var r = data && data.results[key];
    var t0 = performance.now();
    out.textContent = "";
    out.setAttribute("data-key", key);
    if (!r) {
      out.setAttribute("data-state", "missing");
      out.appendChild(el("p", { "class": "note" },
        "This combination was not evaluated for the site (run the command below for any inputs)."));
      out.appendChild(command());
      return done(t0);
    }
    var s = data.strings;
    out.setAttribute("data-state", r.status);
    var fit = section("Feasibility", "x-fit");
    var fits = r.status === "feasible" || (r.status === "unpriced" && r.fits === true);
    var verdict = el("p", { "class": "explore-verdict", "data-fits": fits ? "yes" : "no" });
    verdict.appendChild(el("strong", { "class": "state " + (fits ? "state-feasible" : "state-infeasible") },
      r.status === "feasible" ? "Fits." : r.status === "infeasible" ? "Does not fit." :
        fits ? "Fits, but kb could not price it." : "Not priced."));
    verdict.appendChild(document.createTextNode(" Needs "));
    verdict.appendChild(el("span", { "data-figure": "need_per_device", "data-exact": r.need[0] }, r.need[1]));
    verdict.appendChild(document.createTextNode(" per device, has "));
    verdict.appendChild(el("span", { "data-figure": "have_per_device", "data-exact": r.have[0] }, r.have[1]));
    verdict.appendChild(document.createTextNode("."));
    fit.appendChild(verdict);
    (r.problems || []).filter(function (p, i, all) { return all.indexOf(p) === i; })
      .forEach(function (p) { fit.appendChild(el("p", { "class": "note" }, s[p])); });
    out.appendChild(fit);
    if (r.status === "feasible") {
      var figs = section("Figures", "x-figures");
      var table = el("table", { "class": "explore-figures" });
      var tbody = el("tbody");
      menus.figures.forEach(function (f, i) { figureRow(tbody, f[1], r.figures[i], f[0]); });
      table.appendChild(tbody);
      var scroll = el("div", { "class": "table-scroll" });
      scroll.appendChild(table);
      figs.appendChild(scroll);
      figs.appendChild(el("p", { "class": "muted" }, "Provenance of the prediction: " + r.provenance + "."));
      out.appendChild(figs);
      out.appendChild(ledger(r, s));
    }
    out.appendChild(receipts(data, r));
    out.appendChild(command());
    return done(t0);
  }

  function ledger(r, s) {
    var sec = section("Ledger of the decode step", "x-ledger");
    var table = el("table", { "class": "ledger" });
    var head = el("tr");
    ["Component", "Time", "Provenance", "Formula"].forEach(function (h) { head.appendChild(el("th", { scope: "col" }, h)); });
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var tbody = el("tbody");
    r.rows.forEach(function (row) {
      var tr = el("tr", { "data-row": s[row[0]] });
      tr.appendChild(el("td", { "data-label": "Component" }, s[row[0]]));
      tr.appendChild(el("td", { "class": "num", "data-label": "Time", "data-exact": row[1] }, row[2]));
      var prov = el("td", { "data-label": "Provenance" });
      prov.appendChild(badge(s[row[3]]));
      (row[5] || []).forEach(function (id) { prov.appendChild(document.createTextNode(" ")); prov.appendChild(link(s[id])); });
      tr.appendChild(prov);
      var formula = el("td", { "data-label": "Formula" });
      formula.appendChild(el("code", {}, s[row[4]]));
      tr.appendChild(formula);
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    var scroll = el("div", { "class": "table-scroll" });
    scroll.appendChild(table);
    sec.appendChild(scroll);
    return sec;
  }

  // The measured end-to-end receipt rows nearest to the chosen conditions: same model, the
  // chosen accelerator first, rows kb compares first, then the distance in devices, batch
  // and lengths (log scale). Each row carries kb's own prediction at the row's conditions
  // (kb list --end-to-end: predicted, error, state); the chosen configuration's figure of
  // the same kind stands beside it.
  function receipts(data, r) {
    var sec = section("Measured receipts nearest to these conditions", "x-receipts");
    var hw = field("hardware").value, shape = field("shape").value.split("|");
    var lengths = field("lengths").value.split("/");
    var want = { gpus: +shape[0], batch: +field("batch").value, input: +lengths[0], output: +lengths[1] };
    function far(a, b) { return a && b ? Math.abs(Math.log(a / b)) : 2; }
    var rows = (data.receipts || []).map(function (row) {
      var d = (row.hardware.indexOf(hw) >= 0 ? 0 : 4) + (row.figure ? 0 : 3) + far(row.gpus, want.gpus) +
        far(row.batch, want.batch) + far(row.input, want.input) + far(row.output, want.output);
      return [d, row];
    }).sort(function (a, b) { return a[0] - b[0]; }).slice(0, menus.nearest);
    if (!rows.length) {
      sec.appendChild(el("p", { "class": "muted" }, "No end-to-end receipt of this model is in the knowledge base."));
      return sec;
    }
    var table = el("table", { "class": "ledger explore-receipts" });
    var head = el("tr");
    ["Receipt", "Conditions", "Measured", "kb at those conditions", "Chosen configuration"].forEach(function (h) {
      head.appendChild(el("th", { scope: "col" }, h));
    });
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var tbody = el("tbody");
    rows.forEach(function (pair) {
      var row = pair[1], tr = el("tr", { "data-receipt": row.receipt + "#" + row.row });
      var name = el("td", { "data-label": "Receipt" });
      name.appendChild(link(row.receipt, row.receipt.replace(/^receipts\//, "")));
      tr.appendChild(name);
      tr.appendChild(el("td", { "data-label": "Conditions" }, row.conditions));
      // prose ("measured TPOT: 23.3 ms"), not a bare number: it wraps on a phone (no "num")
      var measured = el("td", { "data-label": "Measured" });
      measured.appendChild(badge("measured"));
      measured.appendChild(document.createTextNode(" " + row.metric + ": " + row.measured));
      tr.appendChild(measured);
      var kb = el("td", { "data-label": "kb at those conditions" });
      kb.appendChild(el("span", { "class": "state state-" + row.state.replace(/ /g, "-") }, row.state));
      kb.appendChild(document.createTextNode(row.predicted
        ? " " + row.predicted + (row.error ? " (" + row.error + ")" : "")
        : (row.reason ? ": " + row.reason : "")));
      tr.appendChild(kb);
      var at = FIGURE_INDEX[row.figure], figure = at !== undefined && r.figures ? r.figures[at] : null;
      tr.appendChild(el("td", { "data-label": "Chosen configuration", "data-exact": figure ? figure[0] : "" },
        figure ? figure[1] + " (" + row.figure.replace(/_/g, " ") + ")" : "no figure of this kind"));
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    var scroll = el("div", { "class": "table-scroll" });
    scroll.appendChild(table);
    sec.appendChild(scroll);
    sec.appendChild(el("p", { "class": "muted" },
      "kb's prediction at a receipt's own conditions is held to its measurement under a band declared once (kb list --end-to-end); the chosen configuration's figure is beside it for scale, not as a comparison of like with like."));
    return sec;
  }

  function command() {
    var shape = field("shape").value.split("|"), lengths = field("lengths").value;
    var degrees = currentDegrees();
    var text = "kb plan " + field("model").value + " --on " + field("hardware").value +
      " --count " + shape[0] + " --nodes " + shape[1] + " --batch " + field("batch").value +
      " --context " + lengths + (field("engine").value ? " --engine " + field("engine").value : "");
    ["tp", "pp", "ep", "dp"].forEach(function (d) { text += " --" + d + " " + (degrees[d] || 1); });
    var p = el("p", { "class": "explore-command" });
    p.appendChild(document.createTextNode("The same question on the command line: "));
    p.appendChild(el("code", {}, text + " --format json"));
    return p;
  }

  function done(t0) {
    var ms = performance.now() - t0;
    out.setAttribute("data-ms", ms.toFixed(2));
    status.textContent = "";
    return ms;
  }

  // ---- wiring ----------------------------------------------------------------------------------
  function update(wanted) {
    var model = field("model").value;
    withData(model, function (data) {
      if (field("model").value !== model) { return; }  // the reader moved on
      setOptions(field("degrees"), degreeOptions(data), wanted && wanted.degrees);
      render(data, resultKey());
      writeHash();
    });
  }

  // The degrees menu depends on the model, accelerator and shape; everything else is fixed.
  form.addEventListener("change", function () { update(); });
  form.addEventListener("submit", function (e) { e.preventDefault(); update(); });
  window.kbExplore = {
    // For the benchmark and the browser test: set controls, recompute, return the ms it took.
    set: function (values) {
      NAMES.forEach(function (n) { if (values[n] !== undefined && n !== "degrees") { field(n).value = values[n]; } });
      var data = window.KB_EXPLORE_DATA[field("model").value] || null;
      setOptions(field("degrees"), degreeOptions(data), values.degrees);
      return render(data, resultKey());
    },
    ready: function (model, then) { withData(model, function (d) { then(!!d); }); },
  };
  var wanted = readHash();
  NAMES.forEach(function (n) { if (wanted[n] !== undefined && n !== "degrees") { field(n).value = wanted[n]; } });
  root.classList.add("explore-live");
  update(wanted);
})();
