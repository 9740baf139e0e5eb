// The import page shows the fields of the kind of file chosen (an evaluation document or
// TREC files) and hides the others. Without this script every field shows, and the
// server ignores those of the other kind.
(function () {
  "use strict";
  const form = document.getElementById("import-form");
  if (!form) return;
  const parts = form.querySelectorAll("[data-import-kind]");

  function showChosenKind() {
    const chosen = form.elements.kind.value;
    parts.forEach((part) => {
      part.hidden = part.dataset.importKind !== chosen;
    });
  }
  form.addEventListener("change", (event) => {
    if (event.target.name === "kind") showChosenKind();
  });
  showChosenKind();
})();
