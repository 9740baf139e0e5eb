// A "Copy" button copies the text of the element it names, for a command to paste:
//
//   <button type="button" data-copy-from="ELEMENT-ID">Copy</button>
//
// The button then says "Copied" for a moment. Where the page may not use the clipboard
// (not a secure context), the text is selected instead, for Ctrl+C.
(function () {
  "use strict";

  function say(button, words) {
    var before = button.dataset.label || button.textContent;
    button.dataset.label = before;
    button.textContent = words;
    window.setTimeout(function () {
      button.textContent = before;
    }, 2000);
  }

  function select(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy-from]");
    if (!button) return;
    var source = document.getElementById(button.dataset.copyFrom);
    if (!source) return;
    if (!navigator.clipboard) {
      select(source);
      say(button, "Selected: press Ctrl+C");
      return;
    }
    navigator.clipboard.writeText(source.textContent).then(
      function () {
        say(button, "Copied");
      },
      function () {
        select(source);
        say(button, "Selected: press Ctrl+C");
      }
    );
  });
})();
