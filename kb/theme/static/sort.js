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
