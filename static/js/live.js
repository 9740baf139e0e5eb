// Live pages (apps/core/live.py). A page made live by templates/_live.html asks its live
// URL with the ETag of what it shows. 304: nothing changed. 200: each top-level element of
// the answer replaces the page's element of the same id, and htmx wires up what came in.
// X-Live-Reload: the page changed more than its parts (a status), and reloads whole.
//
// When it asks: where the server runs the live stream (data-live-stream), when the stream
// says the page's topic changed, when the stream (re)opens, since a change may have come
// while it was closed, and every data-live-backstop ms in case a message was lost.
// Without a stream, or once the stream refuses (an old token), every data-live-every ms.
//
// A part holding the field someone is typing in is left alone until the next change.
// A hidden tab does not ask; it asks at once when shown again.
(function () {
  "use strict";

  function typingIn(element) {
    var focused = document.activeElement;
    return focused && element.contains(focused) && /^(INPUT|TEXTAREA|SELECT)$/.test(focused.tagName);
  }

  function swapParts(html) {
    var answer = document.createElement("template");
    answer.innerHTML = html;
    // A copy: moving an element into the page takes it out of the live children list.
    Array.prototype.slice.call(answer.content.children).forEach(function (fresh) {
      var current = fresh.id && document.getElementById(fresh.id);
      if (!current || typingIn(current)) return;
      current.replaceWith(fresh);
      if (window.htmx) window.htmx.process(fresh);
    });
    document.dispatchEvent(new CustomEvent("relevo:live-swapped"));
  }

  function follow(settings) {
    var url = settings.dataset.liveUrl;
    var etag = settings.dataset.liveEtag || "";
    var every = parseInt(settings.dataset.liveEvery, 10) || 1500;
    var backstop = parseInt(settings.dataset.liveBackstop, 10) || every;
    var asking = false;
    var askAgain = false; // told of a change while an ask was on its way: ask once more
    var askedAt = Date.now();
    var stream = null;

    function ask() {
      if (document.hidden) return;
      if (asking) {
        askAgain = true;
        return;
      }
      asking = true;
      askedAt = Date.now();
      var headers = etag ? { "If-None-Match": etag } : {};
      // no-store: the browser's cache stays out of it, so a 304 reaches this code as is.
      fetch(url, { headers: headers, credentials: "same-origin", cache: "no-store" })
        .then(function (response) {
          // A reload also when the answer was a redirect (logged out: to the log-in page).
          if (response.headers.get("X-Live-Reload") || response.redirected) {
            window.location.reload();
            return null;
          }
          if (response.status !== 200) return null;
          etag = response.headers.get("ETag") || "";
          return response.text().then(swapParts);
        })
        .catch(function () { /* offline for a moment: the next tick asks again */ })
        .then(function () {
          asking = false;
          if (askAgain) {
            askAgain = false;
            ask();
          }
        });
    }

    function streamOpen() {
      return stream !== null && stream.readyState === window.EventSource.OPEN;
    }

    if (settings.dataset.liveStream && window.EventSource) {
      stream = new window.EventSource(settings.dataset.liveStream);
      stream.addEventListener("changed", ask);
      stream.addEventListener("open", ask);
    }

    window.setInterval(function () {
      if (Date.now() - askedAt >= (streamOpen() ? backstop : every) - 100) ask();
    }, every);
    document.addEventListener("visibilitychange", ask);
  }

  function start() {
    document.querySelectorAll("[data-live-url]").forEach(follow);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
