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

  const none = { name: "", keywords: "" };
  let chosen = none;
  function applyModel() {
    const next = models[model.value] || none;
    if (!name.value.trim() || name.value === chosen.name) name.value = next.name;
    if (!keywords.value.trim() || keywords.value === chosen.keywords) keywords.value = next.keywords;
    chosen = next;
    countKeywords();
  }
  model.addEventListener("change", applyModel);
  // A model may be chosen before this deferred script runs (a quick hand, or the browser
  // restoring the form): its empty fields are filled now as the change would have.
  applyModel();

  let scaleMetrics = metricsByScale[scale.value];
  scale.addEventListener("change", () => {
    if (!metrics.value.trim() || metrics.value === scaleMetrics) {
      metrics.value = metricsByScale[scale.value] || metrics.value;
    }
    scaleMetrics = metricsByScale[scale.value];
  });

  keywords.addEventListener("input", countKeywords);
})();
