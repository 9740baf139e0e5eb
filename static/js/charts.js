// Draws every <canvas data-chart="ID"> from the JSON in <script id="ID"> (json_script),
// with Chart.js (static/vendor/chartjs). Values show on hover; each page also prints
// them in a table. Runs on load and after htmx swaps in new content.
(function () {
  "use strict";
  var COLOURS = ["#1d4ed8", "#15803d", "#b45309", "#9333ea", "#be123c", "#0e7490"];

  function format(value) {
    if (value === null || value === undefined) return "no value";
    return Number.isInteger(value) ? String(value) : value.toFixed(4);
  }

  function config(data) {
    var bar = data.kind === "bar";
    return {
      type: data.kind,
      data: {
        labels: data.labels,
        datasets: data.series.map(function (series, index) {
          var colour = COLOURS[index % COLOURS.length];
          return {
            label: series.name,
            data: series.values,
            borderColor: colour,
            backgroundColor: bar ? colour : colour + "22",
            borderWidth: bar ? 0 : 2,
            pointRadius: data.labels.length > 40 ? 0 : 3,
            pointHitRadius: 8,
            spanGaps: true,
            tension: 0
          };
        })
      },
      options: {
        indexAxis: bar ? "y" : "x",
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: "index", intersect: false },
        plugins: {
          legend: { display: data.series.length > 1 },
          tooltip: {
            callbacks: {
              label: function (item) { return item.dataset.label + ": " + format(item.raw); }
            }
          }
        },
        scales: bar ? {
          x: { beginAtZero: true, title: { display: !!data.axis, text: data.axis } },
          y: { ticks: { autoSkip: false } }
        } : {
          x: { ticks: { display: !data.compact, maxTicksLimit: 6, autoSkip: true }, grid: { display: false } },
          y: { ticks: { maxTicksLimit: data.compact ? 3 : 6 }, title: { display: !!data.axis, text: data.axis } }
        }
      }
    };
  }

  function draw(root) {
    if (typeof window.Chart === "undefined") return;
    root.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      if (canvas.dataset.drawn) return;
      var source = document.getElementById(canvas.dataset.chart);
      if (!source) return;
      new window.Chart(canvas, config(JSON.parse(source.textContent)));
      canvas.dataset.drawn = "1";
    });
  }

  document.addEventListener("DOMContentLoaded", function () { draw(document); });
  document.addEventListener("htmx:load", function (event) { draw(event.target); });
})();
