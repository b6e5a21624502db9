// Offline search over window.SEARCH_INDEX (written by `kb build`); works from file:// too.
// Every query word must match a word of the record: exactly, as a prefix (`nvl` finds
// NVLink), or within one typo (two for long words; `nvlnk`, `bandwdith`). Numbers match
// exactly or as a prefix, never by typo (3350 must not find 3360). A number with a unit
// (`4800 GB/s`, `4.8TB/s`) is a figure: read into base units with window.SEARCH_UNITS and
// found in whichever unit it was authored. Exact id, title and symbol matches (`h200`,
// `B*`, `B_star`) rank first; a word that names a field of the record ("h200 bandwidth")
// answers with that field. Kinds filter the results.
(function () {
  "use strict";
  var index = window.SEARCH_INDEX || [];
  var UNITS = window.SEARCH_UNITS || {};
  var FIELDS = [["id", 4], ["title", 3], ["terms", 2], ["figures", 2], ["fields", 1.5],
    ["kind", 1], ["text", 1]];
  var KIND_PRIOR = { flop_class: 0.4, accelerator: 0.45, model: 0.35, interconnect: 0.35,
    strategy: 0.2, placement: 0.1 };
  var QUANTITY = /(?<![0-9a-z.])(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*([a-z\u00b5][a-z\u00b5\/]*)/gi;
  var vocab = null;  // word -> {entry index: best field weight}

  function words(text) {
    return String(text || "").toLowerCase().split(/[^0-9a-z\u00b5\u00c0-\u024f.+]+/)
      .map(function (w) { return w.replace(/^[.+]+|[.+]+$/g, ""); })
      .filter(Boolean);
  }

  function fieldWords(entry) {
    return (entry.quantities || []).map(function (q) { return fieldParts(q[0]).join(" "); })
      .join(" ");
  }

  // A field path's words: `links.0.per_link` -> links, per, link (list positions are no words).
  function fieldParts(path) {
    return path.toLowerCase().split(/[._]/).filter(function (p) { return p && !/^[0-9]+$/.test(p); });
  }

  function build() {
    vocab = Object.create(null);
    index.forEach(function (entry, i) {
      entry.fields = fieldWords(entry);
      entry.idWords = words(entry.id.replace(/[-_/]/g, " "));
      entry.nameWords = entry.idWords.concat(words(entry.title));
      entry.symbolList = String(entry.symbols || "").split(" ").filter(Boolean);
      FIELDS.forEach(function (f) {
        var parts = words(entry[f[0]]);
        if (f[0] === "id") { parts = parts.concat(entry.idWords); }
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

  // The figures of `query` (`4800 GB/s`) each with the entries holding it; the rest as text.
  // A number whose unit is unknown, or whose figure no record holds, stays a word.
  function figures(query) {
    var found = [];
    var rest = query.replace(QUANTITY, function (all, number, unit) {
      var u = UNITS[unit.toLowerCase()];  // "factor dimension"
      if (!u) { return all; }
      u = [parseFloat(u), u.slice(u.indexOf(" ") + 1)];
      var value = parseFloat(number) * u[0], hits = Object.create(null), any = false;
      index.forEach(function (entry, i) {
        (entry.quantities || []).forEach(function (q) {
          if (q[2] === u[1] && Math.abs(q[1] - value) <= 1e-9 * Math.abs(value) && !hits[i]) {
            hits[i] = q; any = true;
          }
        });
      });
      if (!any) { return all; }
      found.push(hits);
      return " ";
    });
    return { hits: found, rest: rest };
  }

  // A bare number is also a figure in any decimal prefix of its unit (`4800` is 4.8 TB/s).
  function scaled(number, found, fieldOf) {
    index.forEach(function (entry, i) {
      (entry.quantities || []).forEach(function (q) {
        if (!(q[1] > 0) || number <= 0 || found[i] >= 2) { return; }
        var k = Math.log(q[1] / number) / Math.LN10 / 3;
        if (Math.abs(k - Math.round(k)) < 1e-9 && Math.abs(k) <= 6) {
          found[i] = 2;
          fieldOf[i] = fieldOf[i] || q;
        }
      });
    });
  }

  function selectedKinds(boxes) {
    var kinds = boxes.filter(function (b) { return b.checked; })
      .map(function (b) { return b.value; });
    return kinds.length ? kinds : null;
  }

  // The field a word names ("bandwidth" -> memory.bandwidth) when the word is not in the name.
  function namedField(entry, term) {
    if (entry.nameWords.some(function (w) { return quality(term, w) >= 0.8; })) { return null; }
    var best = null;
    (entry.quantities || []).forEach(function (q) {
      if (best) { return; }
      var parts = fieldParts(q[0]);
      if (parts.some(function (p) { return p === term || (term.length >= 4 && p.lastIndexOf(term, 0) === 0); })) {
        best = q;
      }
    });
    return best;
  }

  function bonus(entry, query, terms) {
    var raw = query.trim().toLowerCase(), compact = raw.replace(/\s+/g, ""), extra = 0;
    var last = entry.id.slice(entry.id.lastIndexOf("/") + 1).toLowerCase();
    if (entry.id.toLowerCase() === raw || last === raw) { extra += 30; }
    if (String(entry.title || "").toLowerCase() === raw) { extra += 20; }
    if (compact && entry.symbolList.indexOf(compact) >= 0) { extra += 15; }
    var covered = entry.idWords.filter(function (w) {
      return terms.some(function (t) { return quality(t, w) >= 0.8; });
    }).length;
    extra += 2 * covered / Math.max(entry.idWords.length, 1);
    var named = terms.filter(function (t) {  // every word in the name: the record itself
      return entry.nameWords.some(function (w) { return w === t; });
    }).length;
    if (terms.length) { extra += 4 * named / terms.length; }
    var fielded = terms.filter(function (t) { return namedField(entry, t); }).length;
    if (named && named + fielded >= terms.length) { extra += 3; }  // name and fields say it all
    return extra + (KIND_PRIOR[entry.kind] || 0);
  }

  function search(query, kinds) {
    if (!vocab) { build(); }
    var fig = figures(String(query || ""));
    var terms = words(fig.rest);
    var total = null;
    var fieldOf = Object.create(null);
    fig.hits.forEach(function (hits) {
      var next = Object.create(null);
      Object.keys(hits).forEach(function (i) {
        if (total === null || total[i] !== undefined) {
          next[i] = (total ? total[i] : 0) + 8;
          fieldOf[i] = fieldOf[i] || hits[i];
        }
      });
      total = next;
    });
    terms.forEach(function (term) {
      var found = matches(term), next = Object.create(null);
      if (/^[0-9]+(\.[0-9]+)?$/.test(term)) { scaled(parseFloat(term), found, fieldOf); }
      Object.keys(found).forEach(function (i) {
        if (total === null || total[i] !== undefined) { next[i] = (total ? total[i] : 0) + found[i]; }
      });
      total = next;
    });
    return Object.keys(total || {})
      .map(function (i) {
        var entry = index[i], score = total[i] + bonus(entry, query, terms);
        var named = terms.map(function (t) { return namedField(entry, t); })
          .filter(Boolean);
        if (named.length && named.length < terms.length) { score += 6; }
        var field = fieldOf[i] || (named.length < terms.length ? named[0] : null) || null;
        return [score, entry, field];
      })
      .filter(function (p) { return !kinds || kinds.indexOf(p[1].kind) >= 0; })
      .sort(function (a, b) { return b[0] - a[0] || (a[1].id < b[1].id ? -1 : 1); });
  }

  window.kbSearch = function (query) { return search(query, null); };  // for the browser tests

  var input = document.getElementById("q");
  var list = document.getElementById("search-results");
  var status = document.getElementById("search-status");
  if (!input || !list || !status) { return; }
  var kindBoxes = Array.prototype.slice.call(document.querySelectorAll("input[name=kind]"));

  function show(query) {
    list.textContent = "";
    if (!words(query).length) { status.textContent = index.length + " records indexed."; return; }
    var hits = search(query, selectedKinds(kindBoxes));
    status.textContent = hits.length + (hits.length === 1 ? " result" : " results") +
      " for \u201c" + query + "\u201d" + (hits.length > 100 ? " (first 100 shown)." : ".");
    hits.slice(0, 100).forEach(function (p) {
      var e = p[1], field = p[2], li = document.createElement("li"), a = document.createElement("a");
      a.href = e.url;
      a.textContent = e.title || e.id;
      var meta = document.createElement("span");
      meta.className = "muted";
      meta.textContent = " " + e.id + " \u00b7 " + e.kind.replace("_", " ");
      li.appendChild(a);
      li.appendChild(meta);
      if (field) {
        var answer = document.createElement("p"), link = document.createElement("a");
        answer.className = "search-field";
        link.href = e.url + "#f-" + field[0].replace(/[^A-Za-z0-9._-]/g, "-");
        link.textContent = field[0] + ": " + field[3];
        answer.appendChild(link);
        li.appendChild(answer);
      }
      var text = document.createElement("p");
      text.textContent = e.text.slice(0, 200);
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
})();
