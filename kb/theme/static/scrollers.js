/* Wrap each table in a box that scrolls sideways (the page itself never does), and make
 * every box that does scroll (a wide table, a long equation, a code block) reachable by
 * keyboard and named for a screen reader: tabindex=0, role=region and a label from its
 * caption or heading, numbered when another region of the page has it already (a
 * landmark's name must tell it apart). Marks run again when the window is resized. */
(function () {
  "use strict";
  var SELECTOR = "main pre, main .math-display, main .table-scroll, main .inline-math";
  function name(box) {
    var caption = box.querySelector("caption");
    if (caption) return caption.textContent.trim();
    var section = box.closest("section, figure, details");
    var heading = section && section.querySelector("h2, h3, summary, figcaption");
    return (heading ? heading.textContent.trim() + ": " : "") + "scrolls sideways";
  }
  function unique(label) {
    var taken = {};
    document.querySelectorAll("[role=region][aria-label]").forEach(function (region) {
      taken[region.getAttribute("aria-label")] = true;
    });
    var candidate = label;
    for (var n = 2; taken[candidate]; n++) candidate = label + " (" + n + ")";
    return candidate;
  }
  function mark() {
    document.querySelectorAll(SELECTOR).forEach(function (box) {
      var wide = box.scrollWidth > box.clientWidth + 1;
      if (wide && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-scroller", "");
        if (!box.hasAttribute("role")) box.setAttribute("role", "region");
        if (!box.hasAttribute("aria-label")) box.setAttribute("aria-label", unique(name(box)));
      } else if (!wide && box.hasAttribute("data-scroller")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-scroller");
      }
    });
  }
  function wrap() {
    document.querySelectorAll("main table").forEach(function (table) {
      var parent = table.parentElement;
      if (parent.classList.contains("table-scroll")) return;
      var box = document.createElement("div");
      box.className = "table-scroll";
      parent.insertBefore(box, table);
      box.appendChild(table);
    });
    document.documentElement.setAttribute("data-scrollers", "");
  }
  var timer = null;
  window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(mark, 150); });
  wrap();
  mark();
})();
