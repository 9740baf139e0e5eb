// Keyboard-first grading. Each scale button carries its key in data-key; a press clicks
// that button, which htmx posts for the slot shown. While a request is in flight, and
// for a moment after the next result appears, presses are ignored, so a double press
// or a held key never grades twice (the server also binds each post to one slot).
//
// A grade that did not reach the database (no network, or the server answered 5xx, such
// as the 503 it gives while the database restarts) is never dropped: it is kept (in
// sessionStorage too, so a reload keeps it), the grader is told "Not saved yet —
// retrying…", and it is sent again, with growing pauses, until the server answers; then
// "Saved". One attempt is in flight at a time, and sending a grade again is harmless:
// the server writes the grade onto the grader's own slot, so the same grade sent twice
// is one judgement. While a grade waits, the card takes no other action (a skip or a
// second grade could overtake it).
(function () {
  "use strict";
  var busy = false;
  var QUIET_AFTER_SWAP_MS = 150;
  // Pauses before each new attempt; the last one repeats. A Retry-After from the server
  // (its 503 says when the database should be back) is waited for at least.
  var RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000, 30000];
  var SAVED_SHOWN_MS = 4000;
  var STORAGE_KEY = "relevo.unsavedGrade";
  // Marks our own resends, so the guard below lets them through.
  var RESEND_HEADER = "X-Relevo-Resend";
  var GRADE_PATH = /\/feedback\/slots\/\d+\/grade\/$/;

  // The grade waiting to be saved: {url, values: {grade, evaluation?}, attempts}.
  var unsaved = null;
  var retryTimer = null;
  var hideTimer = null;

  function card() { return document.getElementById("card"); }

  function typingIn(target) {
    return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
      target.tagName === "SELECT" || target.isContentEditable);
  }

  function press(element) {
    if (!element || busy || unsaved) return;
    busy = true;
    element.classList.add("pressed");
    element.click();
  }

  // --- The notice under the card -------------------------------------------------------

  function notice(state, text) {
    var element = document.getElementById("save-notice");
    if (!element) return;
    window.clearTimeout(hideTimer);
    element.textContent = text;
    element.dataset.state = state;
    element.hidden = !text;
    if (state === "saved") {
      hideTimer = window.setTimeout(function () { notice("", ""); }, SAVED_SHOWN_MS);
    }
  }

  // --- Keeping and resending a grade ---------------------------------------------------

  function remember() {
    try {
      if (unsaved) {
        window.sessionStorage.setItem(STORAGE_KEY, JSON.stringify(unsaved));
      } else {
        window.sessionStorage.removeItem(STORAGE_KEY);
      }
    } catch (error) { /* storage off or full: the grade is still kept in this page */ }
  }

  function remembered() {
    try {
      var kept = JSON.parse(window.sessionStorage.getItem(STORAGE_KEY) || "null");
      return kept && kept.url && kept.values ? kept : null;
    } catch (error) {
      return null;
    }
  }

  function isGradePost(detail) {
    var config = detail && detail.requestConfig;
    return !!config && config.verb === "post" && GRADE_PATH.test(config.path);
  }

  function sentValues(config) {
    var values = {};
    if (config.formData && config.formData.forEach) {
      config.formData.forEach(function (value, name) { values[name] = value; });
    }
    return values;
  }

  // Seconds the server asked to wait (Retry-After), in milliseconds; 0 if it did not say.
  function askedToWait(xhr) {
    var header = xhr && xhr.status ? xhr.getResponseHeader("Retry-After") : null;
    var seconds = parseInt(header || "", 10);
    return seconds > 0 ? seconds * 1000 : 0;
  }

  function keep(detail) {
    if (!unsaved) {
      unsaved = {url: detail.requestConfig.path, values: sentValues(detail.requestConfig),
                 attempts: 0};
    }
    unsaved.attempts += 1;
    remember();
    var pause = RETRY_DELAYS_MS[Math.min(unsaved.attempts - 1, RETRY_DELAYS_MS.length - 1)];
    scheduleResend(Math.max(pause, askedToWait(detail.xhr)));
  }

  function scheduleResend(pause) {
    notice("retrying", "Not saved yet — retrying… Your grade is kept and will be sent " +
      "again; keep this page open.");
    window.clearTimeout(retryTimer);
    retryTimer = window.setTimeout(resend, pause);
  }

  function resend() {
    if (!unsaved || !window.htmx) return;
    var headers = {};
    headers[RESEND_HEADER] = "1";
    // Through htmx, so the answer (the next result) is swapped in as a grade's always is,
    // with the page's CSRF header; a failure comes back to keep() by the same events.
    window.htmx.ajax("POST", unsaved.url, {
      source: card() || document.body, target: "#card", swap: "outerHTML",
      values: unsaved.values, headers: headers
    });
  }

  function answered(detail) {
    var status = detail.xhr ? detail.xhr.status : 0;
    var wasRetrying = !!unsaved;
    if (status === 0 || status >= 500) {  // never arrived, or the server could not save it
      keep(detail);
      return;
    }
    // The server decided: saved (2xx), or refused with its reason on the card (4xx, e.g.
    // the result was given to someone else meanwhile). Either way nothing is left to send.
    unsaved = null;
    remember();
    if (status < 300) {
      if (wasRetrying) notice("saved", "Saved");
    } else {
      notice("", "");
    }
  }

  // Every grade's end, whatever became of it (htmx fires this after errors too).
  document.addEventListener("htmx:afterRequest", function (event) {
    if (isGradePost(event.detail)) answered(event.detail);
  });

  // While a grade waits, nothing else is sent: a skip, Previous or another grade of this
  // card could overtake it. Our own resends carry RESEND_HEADER.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var headers = event.detail.requestConfig && event.detail.requestConfig.headers;
    if (unsaved && !(headers && headers[RESEND_HEADER])) {
      event.preventDefault();
      return;
    }
    busy = true;
  });

  // Leaving the page while a grade waits would lose it once the tab is closed.
  window.addEventListener("beforeunload", function (event) {
    if (unsaved) { event.preventDefault(); event.returnValue = ""; }
  });

  // --- Keys and clicks -----------------------------------------------------------------

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
  document.addEventListener("DOMContentLoaded", function () {
    ready();
    // A grade kept by this tab before a reload (or a page the database could not serve):
    // send it now.
    unsaved = remembered();
    if (unsaved) scheduleResend(0);
  });
  // A failed request must not leave the keyboard dead (a grade that failed is resent, and
  // press() waits for it).
  document.addEventListener("htmx:responseError", ready);
  document.addEventListener("htmx:sendError", ready);
})();
