// Click a column heading of a .sortable table to sort by it (numbers numerically).
// Progressive enhancement: without JavaScript the table stays in id order.
(function () {
  "use strict";
  function key(row, col) {
    var cell = row.cells[col];
    return cell ? (cell.getAttribute("data-sort") || cell.textContent).trim() : "";
  }
  function compare(a, b) {
    var x = parseFloat(a), y = parseFloat(b);
    var numeric = a !== "" && b !== "" && !isNaN(x) && !isNaN(y) && isFinite(a) && isFinite(b);
    if (numeric) { return x - y; }
    if (a === "") { return b === "" ? 0 : 1; }
    if (b === "") { return -1; }
    return a < b ? -1 : a > b ? 1 : 0;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var body = table.tBodies[0];
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = th.textContent;
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var order = compare(key(r1, col), key(r2, col));
          return ascending ? order : -order;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();

// Click a row heading of a table.sortable-columns (accelerators side by side) to order its
// columns by that row's values, largest first, then smallest first; empty cells stay last.
(function () {
  "use strict";
  function key(row, col) {
    var cell = row.cells[col];
    return cell ? (cell.getAttribute("data-sort") || "").trim() : "";
  }
  function order(a, b) {
    var x = parseFloat(a), y = parseFloat(b);
    if (!isNaN(x) && !isNaN(y) && isFinite(a) && isFinite(b)) { return x - y; }
    return a < b ? -1 : a > b ? 1 : 0;
  }
  document.querySelectorAll("table.sortable-columns").forEach(function (table) {
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var th = row.cells[0], button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = th.textContent;
      button.title = "order the columns by this row";
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () {
        var descending = th.getAttribute("aria-sort") !== "descending";
        Array.prototype.forEach.call(table.tBodies[0].rows, function (r) { r.cells[0].removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        var cols = [];
        for (var c = 1; c < table.rows[0].cells.length; c++) { cols.push(c); }
        cols.sort(function (i, j) {
          var a = key(row, i), b = key(row, j);
          if (a === "" || b === "") { return a === b ? i - j : a === "" ? 1 : -1; }
          return (descending ? -1 : 1) * order(a, b) || i - j;
        });
        Array.prototype.forEach.call(table.rows, function (r) {
          var cells = Array.prototype.slice.call(r.cells);
          cols.forEach(function (i) { if (cells[i]) { r.appendChild(cells[i]); } });
        });
      });
    });
  });
})();

// Type in an input.table-filter to keep the rows (data-filter="rows") or the columns
// (data-filter="columns") of the table it names (data-table) whose text holds every word,
// or any of the words when the input says data-match="any" (`h100 h200 b200`).
(function () {
  "use strict";
  function matches(text, words, any) {
    text = text.toLowerCase();
    function has(w) { return text.indexOf(w) >= 0; }
    return any ? !words.length || words.some(has) : words.every(has);
  }
  document.querySelectorAll("input.table-filter").forEach(function (input) {
    var table = document.getElementById(input.getAttribute("data-table"));
    var status = document.getElementById(input.getAttribute("aria-describedby") || "");
    if (!table) { return; }
    var any = input.getAttribute("data-match") === "any";
    function apply() {
      var words = input.value.toLowerCase().split(/[\s,]+/).filter(Boolean);
      var shown = 0, total = 0;
      if (input.getAttribute("data-filter") === "columns") {
        var heads = table.tHead.rows[0].cells;
        for (var col = 1; col < heads.length; col++) {
          var keep = matches(heads[col].textContent, words, any);
          total++; if (keep) { shown++; }
          Array.prototype.forEach.call(table.rows, function (row) {
            if (row.cells[col]) { row.cells[col].hidden = !keep; }
          });
        }
      } else {
        Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
          var keep = matches(row.textContent, words, any);
          total++; if (keep) { shown++; }
          row.hidden = !keep;
        });
      }
      if (status) { status.textContent = shown + " of " + total + " shown"; }
    }
    input.addEventListener("input", apply);
    apply();
  });
})();
