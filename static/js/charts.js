// Draws every <canvas data-chart="ID"> from the JSON in <script id="ID"> (json_script),
// with Chart.js (static/vendor/chartjs). Values show on hover; each page also prints
// them in a table. Runs on load and after htmx swaps in new content.
//
// A line with "times" stands on a real time axis: a linear axis of milliseconds, ticks
// at whole minutes, hours or days labelled as dates by this script (Chart.js's own time
// axis needs a date library, which Relevo does not ship). The times are wall-clock
// readings counted as if UTC (apps/insights/charts.py, wall_clock_ms), so the date and
// hour read from them are those the page's tables show.
(function () {
  "use strict";
  var COLOURS = ["#1d4ed8", "#15803d", "#b45309", "#9333ea", "#be123c", "#0e7490"];
  var MINUTE = 60 * 1000;
  var HOUR = 60 * MINUTE;
  var DAY = 24 * HOUR;
  // The steps a time axis ticks by: the first that leaves each tick room for its label
  // (about 45 pixels for a day's, 95 for a minute's), at most MOST_TIME_TICKS ticks.
  var TIME_STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR,
    12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY, 91 * DAY, 182 * DAY, 364 * DAY];
  var MOST_TIME_TICKS = 6;

  function timeStep(span, width) {
    for (var i = 0; i < TIME_STEPS.length; i++) {
      var room = Math.floor(width / (TIME_STEPS[i] < DAY ? 95 : 45));
      if (span / TIME_STEPS[i] <= Math.max(1, Math.min(MOST_TIME_TICKS, room))) {
        return TIME_STEPS[i];
      }
    }
    return TIME_STEPS[TIME_STEPS.length - 1] * Math.ceil(span / (MOST_TIME_TICKS * 364 * DAY));
  }

  // A tick's label, read from the wall-clock number: "2026-11" when ticks are about a
  // month apart or more, "11-17" a day or more, else "11-17 16:30" (the tooltip and the
  // table give the full date).
  function timeText(value, step) {
    var iso = new Date(value).toISOString();  // 2026-11-17T16:30:00.000Z
    if (step >= 28 * DAY) return iso.slice(0, 7);
    if (step >= DAY) return iso.slice(5, 10);
    return iso.slice(5, 10) + " " + iso.slice(11, 16);
  }

  function timeAxis(data) {
    var first = data.times[0];
    var last = data.times[data.times.length - 1];
    if (last - first < MINUTE) {  // one moment: half a day either side of it
      first -= DAY / 2;
      last += DAY / 2;
    }
    var step = DAY;  // chosen again for the axis's width each time it is laid out
    return {
      type: "linear",
      min: first,
      max: last,
      afterBuildTicks: function (scale) {
        step = timeStep(last - first, scale.width);
        var ticks = [];
        for (var value = Math.ceil(scale.min / step) * step; value <= scale.max; value += step) {
          ticks.push({ value: value });
        }
        scale.ticks = ticks;
      },
      ticks: {
        display: !data.compact,
        maxRotation: 0,
        callback: function (value) { return timeText(value, step); }
      },
      grid: { display: false }
    };
  }

  // A time axis takes points as {x, y}; any other chart, values along its labels.
  function points(data, values) {
    if (!data.times) return values;
    return values.map(function (value, index) { return { x: data.times[index], y: value }; });
  }

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
            data: points(data, series.values),
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
              // On a time axis the label of the point (its minute, its evaluation).
              title: function (items) {
                return items.length ? data.labels[items[0].dataIndex] : "";
              },
              label: function (item) {
                var value = data.times ? item.raw.y : item.raw;
                return item.dataset.label + ": " + format(value);
              }
            }
          }
        },
        scales: bar ? {
          x: { beginAtZero: true, title: { display: !!data.axis, text: data.axis } },
          y: { ticks: { autoSkip: false } }
        } : {
          x: data.times ? timeAxis(data) : {
            ticks: { display: !data.compact, maxTicksLimit: 6, autoSkip: true },
            grid: { display: false }
          },
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
