// The schedule form's presets: "Every hour / day / week" at a time fill its cron field,
// which stays what is saved (and what a person may still type for anything else).
// Filling it sends an input event, so htmx reads the new cron back in words.
//
//   hourly at minute M           ->  M * * * *
//   daily at HH:MM               ->  MM HH * * *
//   weekly on day D at HH:MM     ->  MM HH * * D   (0 Sunday … 6 Saturday)
//
// A cron already of one of these shapes chooses its preset when the page opens.
(function () {
  "use strict";

  var SHAPES = {
    hourly: /^(\d{1,2}) \* \* \* \*$/,
    daily: /^(\d{1,2}) (\d{1,2}) \* \* \*$/,
    weekly: /^(\d{1,2}) (\d{1,2}) \* \* ([0-6])$/,
  };

  function pad(number) {
    return (number < 10 ? "0" : "") + number;
  }

  function setUp(presets) {
    var form = presets.closest("form");
    var cronBox = form.querySelector("input[name=cron]");
    var part = function (name) {
      return presets.querySelector("[data-preset=" + name + "]");
    };

    function showParts() {
      var kind = part("kind").value;
      presets.querySelectorAll("[data-preset-for]").forEach(function (holder) {
        holder.hidden = holder.dataset.presetFor.split(" ").indexOf(kind) < 0;
      });
    }

    function cronOfPreset() {
      var kind = part("kind").value;
      var time = (part("time").value || "00:00").split(":");
      var hour = parseInt(time[0], 10);
      var minute = parseInt(time[1], 10);
      if (kind === "hourly") return Math.min(59, Math.max(0, parseInt(part("minute").value, 10) || 0)) + " * * * *";
      if (kind === "daily") return minute + " " + hour + " * * *";
      if (kind === "weekly") return minute + " " + hour + " * * " + part("day").value;
      return null;
    }

    function fill() {
      showParts();
      var cron = cronOfPreset();
      if (cron === null) return;
      cronBox.value = cron;
      cronBox.dispatchEvent(new Event("input", { bubbles: true }));
    }

    function chooseFromCron() {
      var cron = cronBox.value.trim().replace(/\s+/g, " ");
      var match;
      if ((match = SHAPES.hourly.exec(cron))) {
        part("kind").value = "hourly";
        part("minute").value = match[1];
      } else if ((match = SHAPES.daily.exec(cron)) || (match = SHAPES.weekly.exec(cron))) {
        part("kind").value = match[3] === undefined ? "daily" : "weekly";
        part("time").value = pad(parseInt(match[2], 10)) + ":" + pad(parseInt(match[1], 10));
        if (match[3] !== undefined) part("day").value = match[3];
      } else {
        part("kind").value = "";
      }
      showParts();
    }

    presets.addEventListener("input", fill);
    presets.addEventListener("change", fill);
    // Typing a cron of another shape: the presets say "As the cron says".
    cronBox.addEventListener("input", function (event) {
      if (event.isTrusted) chooseFromCron();
    });
    chooseFromCron();
    presets.hidden = false;
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-cron-presets]").forEach(setUp);
  });
})();
