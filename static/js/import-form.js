// The import page shows the fields of the kind of file chosen (an evaluation document or
// TREC files) and hides the others. Without this script every field shows, and the
// server ignores those of the other kind.
//
// The form is sent with htmx, and the answer to a refused import is the report alone
// (views.evaluation_import). Any other answer (a body over the size limit, an expired
// form, a failure) is said in one line in the report's place, never swapped in as a page.
(function () {
  "use strict";
  const form = document.getElementById("import-form");
  const report = document.getElementById("import-report");
  if (!form || !report) return;
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

  function sayNothingWasImported(why) {
    const line = document.createElement("div");
    line.className = "card error-list";
    line.setAttribute("role", "alert");
    line.dataset.testid = "import-problems";
    const text = document.createElement("p");
    text.textContent = `Nothing was imported: ${why}`;
    line.append(text);
    report.replaceChildren(line);
  }
  // htmx announces a swap on its target, the report.
  report.addEventListener("htmx:beforeSwap", (event) => {
    const answer = event.detail.xhr;
    if (answer.status === 200) return; // the report, or the redirect to the evaluation
    event.detail.shouldSwap = false;
    const plain = (answer.getResponseHeader("Content-Type") || "").startsWith("text/plain");
    sayNothingWasImported(
      plain
        ? answer.responseText
        : answer.status === 403
          ? "this form has expired (or your role changed). Reload the page and import again."
          : `the server answered ${answer.status}. Reload the page and import again.`,
    );
  });
  form.addEventListener("htmx:sendError", () => {
    sayNothingWasImported("the server could not be reached. Check the connection and import again.");
  });
})();
