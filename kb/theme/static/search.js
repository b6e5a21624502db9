// Offline search over window.SEARCH_INDEX (written by `kb build`); works from file:// too.
// Every query word must match a word of the record: exactly, as a prefix (`nvl` finds
// NVLink), or within one typo (two for long words; `nvlnk`, `bandwdith`). Numbers match
// exactly or as a prefix, never by typo (3350 must not find 3360). Figures are indexed in
// their authored and readable units (3350 GB/s and 3.35 TB/s). Kinds filter the results.
(function () {
  "use strict";
  var index = window.SEARCH_INDEX || [];
  var input = document.getElementById("q");
  var list = document.getElementById("search-results");
  var status = document.getElementById("search-status");
  if (!input || !list || !status) { return; }
  var kindBoxes = Array.prototype.slice.call(document.querySelectorAll("input[name=kind]"));
  var FIELDS = [["id", 4], ["title", 3], ["terms", 2], ["figures", 2], ["kind", 1], ["text", 1]];
  var vocab = null;  // word -> {entry index: best field weight}

  function words(text) {
    return String(text || "").toLowerCase().split(/[^0-9a-z\u00b5\u00c0-\u024f.+]+/)
      .map(function (w) { return w.replace(/^[.+]+|[.+]+$/g, ""); })
      .filter(Boolean);
  }

  function build() {
    vocab = Object.create(null);
    index.forEach(function (entry, i) {
      FIELDS.forEach(function (f) {
        var parts = words(entry[f[0]]);
        if (f[0] === "id") { parts = parts.concat(words(entry.id.replace(/[-_/]/g, " "))); }
        parts.forEach(function (w) {
          var slot = vocab[w] || (vocab[w] = Object.create(null));
          if (!(slot[i] >= f[1])) { slot[i] = f[1]; }
        });
      });
    });
  }

  // Optimal string alignment distance, giving up (returns limit + 1) beyond `limit`.
  function distance(a, b, limit) {
    if (Math.abs(a.length - b.length) > limit) { return limit + 1; }
    var prev2 = null, prev = [], cur, i, j;
    for (j = 0; j <= b.length; j++) { prev.push(j); }
    for (i = 1; i <= a.length; i++) {
      cur = [i];
      var best = i;
      for (j = 1; j <= b.length; j++) {
        var cost = a[i - 1] === b[j - 1] ? 0 : 1;
        var v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
        if (prev2 && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
          v = Math.min(v, prev2[j - 2] + 1);
        }
        cur.push(v);
        if (v < best) { best = v; }
      }
      if (best > limit) { return limit + 1; }
      prev2 = prev; prev = cur;
    }
    return prev[b.length];
  }

  // How well `word` (of the index) matches query `term`: 1 exact, .8 prefix, .5 typo, 0 not.
  function quality(term, word) {
    if (word === term) { return 1; }
    if (word.lastIndexOf(term, 0) === 0) { return 0.8; }
    if (/^[0-9.]+$/.test(term) || term.length < 4) { return 0; }
    var limit = term.length >= 8 ? 2 : 1;
    if (distance(term, word, limit) <= limit) { return 0.5; }
    if (word.length > term.length && distance(term, word.slice(0, term.length), 1) <= 1) {
      return 0.4;
    }
    return 0;
  }

  function matches(term) {
    var found = Object.create(null);
    Object.keys(vocab).forEach(function (word) {
      var q = quality(term, word);
      if (!q) { return; }
      var slot = vocab[word];
      Object.keys(slot).forEach(function (i) {
        var s = q * slot[i];
        if (!(found[i] >= s)) { found[i] = s; }
      });
    });
    return found;
  }

  function selectedKinds() {
    var kinds = kindBoxes.filter(function (b) { return b.checked; })
      .map(function (b) { return b.value; });
    return kinds.length ? kinds : null;
  }

  function search(query) {
    if (!vocab) { build(); }
    var terms = words(query);
    var kinds = selectedKinds();
    var total = null;
    terms.forEach(function (term) {
      var found = matches(term), next = Object.create(null);
      Object.keys(found).forEach(function (i) {
        if (total === null || total[i] !== undefined) { next[i] = (total ? total[i] : 0) + found[i]; }
      });
      total = next;
    });
    return Object.keys(total || {})
      .map(function (i) { return [total[i], index[i]]; })
      .filter(function (p) { return !kinds || kinds.indexOf(p[1].kind) >= 0; })
      .sort(function (a, b) { return b[0] - a[0] || (a[1].id < b[1].id ? -1 : 1); });
  }

  function show(query) {
    list.textContent = "";
    if (!words(query).length) { status.textContent = index.length + " records indexed."; return; }
    var hits = search(query);
    status.textContent = hits.length + (hits.length === 1 ? " result" : " results") +
      " for \u201c" + query + "\u201d" + (hits.length > 100 ? " (first 100 shown)." : ".");
    hits.slice(0, 100).forEach(function (p) {
      var e = p[1], li = document.createElement("li"), a = document.createElement("a");
      a.href = e.url;
      a.textContent = e.title || e.id;
      var meta = document.createElement("span");
      meta.className = "muted";
      meta.textContent = " " + e.id + " \u00b7 " + e.kind.replace("_", " ");
      var text = document.createElement("p");
      text.textContent = e.text.slice(0, 200);
      li.appendChild(a);
      li.appendChild(meta);
      li.appendChild(text);
      list.appendChild(li);
    });
  }

  var params = new URLSearchParams(window.location.search);
  var initial = params.get("q") || "";
  var wanted = params.getAll("kind");
  kindBoxes.forEach(function (b) {
    b.checked = wanted.indexOf(b.value) >= 0;
    b.addEventListener("change", function () { show(input.value); });
  });
  input.value = initial;
  input.addEventListener("input", function () { show(input.value); });
  show(initial);
  window.kbSearch = search;  // for the browser tests
})();
