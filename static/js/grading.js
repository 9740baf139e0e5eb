// Keyboard-first grading. Each scale button carries its key in data-key; a press clicks
// that button, which htmx posts for the slot shown. While a request is in flight, and
// for a moment after the next result appears, presses are ignored, so a double press
// or a held key never grades twice (the server also binds each post to one slot).
(function () {
  "use strict";
  var busy = false;
  var QUIET_AFTER_SWAP_MS = 150;

  function card() { return document.getElementById("card"); }

  function typingIn(target) {
    return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
      target.tagName === "SELECT" || target.isContentEditable);
  }

  function press(element) {
    if (!element || busy) return;
    busy = true;
    element.classList.add("pressed");
    element.click();
  }

  document.addEventListener("keydown", function (event) {
    if (event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    var root = card();
    if (!root) return;
    if (event.key === "Escape") {
      var open = root.querySelector("dialog[open]");
      if (open) { open.close(); }
      return;
    }
    if (typingIn(event.target)) return;
    var key = event.key;
    var target = null;
    if (key === "Backspace") {
      target = root.querySelector("[data-action=previous]");
    } else if (key === "s" || key === "S") {
      target = root.querySelector("[data-action=skip]");
    } else if (key === "g" || key === "G") {
      var guidelines = root.querySelector("details.guidelines");
      if (guidelines) { guidelines.open = !guidelines.open; event.preventDefault(); }
      return;
    } else {
      target = root.querySelector('button.grade[data-key="' + CSS.escape(key) + '"]');
    }
    if (target) {
      event.preventDefault();
      press(target);
    }
  });

  document.addEventListener("click", function (event) {
    var thumb = event.target.closest && event.target.closest("[data-enlarge]");
    if (thumb) {
      var dialog = thumb.parentElement.querySelector("dialog.lightbox");
      if (dialog) dialog.showModal();
    }
  });

  document.addEventListener("htmx:beforeRequest", function () { busy = true; });
  function ready() {
    busy = false;
    var root = card();
    if (root) { root.dataset.ready = "1"; }  // tests and assistive tools can wait for this
  }

  document.addEventListener("htmx:afterSettle", function () {
    window.setTimeout(ready, QUIET_AFTER_SWAP_MS);
    var root = card();
    if (root) { root.setAttribute("tabindex", "-1"); root.focus({ preventScroll: true }); }
  });
  document.addEventListener("DOMContentLoaded", ready);
  // A failed request must not leave the keyboard dead.
  document.addEventListener("htmx:responseError", ready);
  document.addEventListener("htmx:sendError", ready);
})();
