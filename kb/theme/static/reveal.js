// A link to a field inside collapsed data opens the <details> around it.
// (A file of its own, not an inline script: the pages' Content-Security-Policy runs
// only the site's own script files.)
(function () {
  function reveal() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    for (var el = target; el; el = el.parentElement) { if (el.tagName === "DETAILS") { el.open = true; } }
    if (target) { target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
})();
