// Enhancements only: every page works without this script.
// - a theme button that overrides the system's light/dark choice (remembered);
// - "/" focuses the search box;
// - a table too wide for the screen, which scrolls in its own box, can be scrolled from the keyboard.
(function () {
  "use strict";
  var root = document.documentElement;
  var stored = null;
  try { stored = window.localStorage.getItem("majordomus-theme"); } catch (e) { stored = null; }
  if (stored === "light" || stored === "dark") { root.setAttribute("data-theme", stored); }

  var button = document.getElementById("theme-toggle");
  if (button) {
    button.hidden = false;
    var label = function () {
      var current = root.getAttribute("data-theme") ||
        (window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
      button.textContent = current === "dark" ? "Light theme" : "Dark theme";
      return current;
    };
    label();
    button.addEventListener("click", function () {
      var next = label() === "dark" ? "light" : "dark";
      root.setAttribute("data-theme", next);
      try { window.localStorage.setItem("majordomus-theme", next); } catch (e) { /* private mode */ }
      label();
    });
  }

  var wraps = document.querySelectorAll(".table-wrap:not([tabindex])");
  var focusable = function () {
    for (var i = 0; i < wraps.length; i++) {
      var wrap = wraps[i];
      if (wrap.scrollWidth > wrap.clientWidth) {
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        wrap.setAttribute("aria-label", "Table, scrolls sideways");
      }
    }
  };
  focusable();
  window.addEventListener("resize", focusable);

  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable);
    if (typing) { return; }
    var search = document.getElementById("site-search");
    if (search) { event.preventDefault(); search.focus(); }
  });
})();
