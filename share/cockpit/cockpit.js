// Enhancements only: every page works without this script.
// - a theme button that overrides the system's light/dark choice (remembered);
// - "/" focuses the search box;
// - a table too wide for the screen, which scrolls in its own box, can be scrolled from the keyboard;
// - a banner with a reload link once the layer changed while the page was open (/cockpit/events).
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

  // A scrolling table is a region a screen reader lists by name, so each is named after what it
  // shows: its caption, else the heading it sits under, else the name of the field it is in;
  // two alike get a number, so no two regions of a page share a name.
  var heading = function (el) {
    for (var node = el; node && node.tagName !== "MAIN"; node = node.parentElement) {
      var dd = node.tagName === "DD" && node.previousElementSibling;
      if (dd && dd.tagName === "DT") { return dd.textContent; }
      for (var prev = node.previousElementSibling; prev; prev = prev.previousElementSibling) {
        if (/^H[1-6]$/.test(prev.tagName)) { return prev.textContent; }
      }
    }
    var h1 = document.querySelector("h1");
    return h1 ? h1.textContent : "";
  };
  var names = {};
  var regionName = function (wrap) {
    var caption = wrap.querySelector("caption");
    var base = ((caption ? caption.textContent : heading(wrap)) || "Table").replace(/\s+/g, " ").trim();
    names[base] = (names[base] || 0) + 1;
    return base + (names[base] > 1 ? " (" + names[base] + ")" : "") + ", table, scrolls sideways";
  };
  var wraps = document.querySelectorAll(".table-wrap:not([tabindex])");
  var focusable = function () {
    for (var i = 0; i < wraps.length; i++) {
      var wrap = wraps[i];
      if (wrap.scrollWidth > wrap.clientWidth && !wrap.hasAttribute("role")) {
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        wrap.setAttribute("aria-label", regionName(wrap));
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

  // The layer changed since this page was rendered: say so once, with a link that reloads it.
  var main = document.querySelector("main");
  if (window.EventSource && main) {
    var events = new EventSource("/cockpit/events");
    events.addEventListener("changed", function () {
      if (document.getElementById("layer-changed")) { return; }
      var banner = document.createElement("p");
      banner.id = "layer-changed";
      banner.className = "notice";
      banner.setAttribute("role", "status");
      banner.appendChild(document.createTextNode("The layer changed since this page was loaded. "));
      var reload = document.createElement("a");
      reload.href = window.location.href;
      reload.textContent = "Reload the page";
      banner.appendChild(reload);
      main.insertBefore(banner, main.firstChild);
    });
    window.addEventListener("pagehide", function () { events.close(); });
  }
})();
