// Offline search over window.SEARCH_INDEX (written by `kb build`); works from file:// too.
(function () {
  "use strict";
  var index = window.SEARCH_INDEX || [];
  var input = document.getElementById("q");
  var list = document.getElementById("search-results");
  var status = document.getElementById("search-status");
  if (!input || !list || !status) { return; }

  function score(entry, terms) {
    var id = entry.id.toLowerCase(), title = entry.title.toLowerCase();
    var hay = id + " " + title + " " + entry.kind + " " + entry.text.toLowerCase();
    var total = 0;
    for (var i = 0; i < terms.length; i++) {
      if (hay.indexOf(terms[i]) < 0) { return 0; }
      total += (id.indexOf(terms[i]) >= 0 ? 4 : 0) + (title.indexOf(terms[i]) >= 0 ? 2 : 0) + 1;
    }
    return total;
  }

  function show(query) {
    var terms = query.toLowerCase().split(/\s+/).filter(Boolean);
    list.textContent = "";
    if (!terms.length) { status.textContent = index.length + " records indexed."; return; }
    var hits = index.map(function (e) { return [score(e, terms), e]; })
      .filter(function (p) { return p[0] > 0; })
      .sort(function (a, b) { return b[0] - a[0] || (a[1].id < b[1].id ? -1 : 1); })
      .slice(0, 100);
    status.textContent = hits.length + (hits.length === 1 ? " result" : " results") +
      " for \u201c" + query + "\u201d.";
    hits.forEach(function (p) {
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

  var initial = new URLSearchParams(window.location.search).get("q") || "";
  input.value = initial;
  input.addEventListener("input", function () { show(input.value); });
  show(initial);
})();
