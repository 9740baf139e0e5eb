// Small form behaviours that templates ask for with data- attributes, instead of inline
// onchange="..." / onclick="..." handlers, which the Content-Security-Policy refuses to run
// (script-src 'self', config/settings.py):
//
//   <select data-submit-on-change>    choosing an option submits the select's form
//   <button data-confirm="Question?"> the button acts only once the person says OK
//   <details data-menu>               a header menu: closes on a click elsewhere or Escape
//
// base.html loads this in the head, not deferred, and it listens on the document: it
// hears a click made before the page has finished loading, and buttons htmx swaps in
// later, without being run again.
(function () {
  "use strict";

  // requestSubmit, not submit(): the form's submit event fires, as when a submit button is
  // pressed, so htmx would take an hx-post form over as usual.
  document.addEventListener("change", function (event) {
    var select = event.target.closest && event.target.closest("[data-submit-on-change]");
    if (select && select.form) select.form.requestSubmit();
  });

  // A click, not the form's submit: htmx takes a form's submit event before it would reach
  // the document, and preventing the click stops the submit from ever being sent.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-confirm]");
    if (button && !window.confirm(button.dataset.confirm)) event.preventDefault();
  });

  function closeMenus(except) {
    document.querySelectorAll("details[data-menu][open]").forEach(function (menu) {
      if (menu !== except) menu.open = false;
    });
  }
  document.addEventListener("click", function (event) {
    closeMenus(event.target.closest && event.target.closest("details[data-menu]"));
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") closeMenus(null);
  });
})();
