// The new-evaluation form: choosing a search model fills in its suggested name and
// default keywords (unless the lead has typed their own), the keyword count follows
// the text box, and changing the scale swaps in that scale's default metrics (unless
// the lead has changed them).
(function () {
  "use strict";
  const form = document.getElementById("evaluation-form");
  const read = (id) => JSON.parse(document.getElementById(id)?.textContent || "{}");
  if (!form) return;
  const models = read("model-defaults");
  const metricsByScale = read("default-metrics");
  const model = form.elements.search_model;
  const name = form.elements.name;
  const keywords = form.elements.keywords;
  const scale = form.elements.scale;
  const metrics = form.elements.metrics;
  const count = document.getElementById("keyword-count");
  const plural = document.getElementById("keyword-count-plural");

  function countKeywords() {
    const unique = new Set(keywords.value.split("\n").map((line) => line.trim()).filter(Boolean));
    count.textContent = String(unique.size);
    plural.textContent = unique.size === 1 ? "" : "s";
  }

  // The option a select was drawn with: the page's fields were filled in for it.
  const drawn = (select) =>
    ([...select.options].find((option) => option.defaultSelected) || select.options[0]).value;

  const none = { name: "", keywords: "" };
  let chosen = models[drawn(model)] || none;
  function applyModel() {
    const next = models[model.value] || none;
    if (!name.value.trim() || name.value === chosen.name) name.value = next.name;
    if (!keywords.value.trim() || keywords.value === chosen.keywords) keywords.value = next.keywords;
    chosen = next;
    countKeywords();
  }
  model.addEventListener("change", applyModel);
  // A model may be chosen before this deferred script runs (a quick hand, or the browser
  // restoring the form): fields left empty, or as filled in for the drawn model, follow
  // it now as the change would have.
  applyModel();

  let scaleMetrics = metricsByScale[drawn(scale)];
  function applyScale() {
    if (!metrics.value.trim() || metrics.value === scaleMetrics) {
      metrics.value = metricsByScale[scale.value] || metrics.value;
    }
    scaleMetrics = metricsByScale[scale.value];
  }
  scale.addEventListener("change", applyScale);
  // Likewise a scale chosen before this script ran: its default metrics replace those the
  // page was drawn with, unless the lead has changed them.
  applyScale();

  keywords.addEventListener("input", countKeywords);
})();
