// Hearth control panel, every page: a page that cannot know what is
// happening says so, instead of showing the last thing it knew. Every page
// polls (the menu's count of waiting requests, and the page's own live
// parts); when a request cannot reach Hearth (htmx:sendError) the page
// shows "Hearth is not running", when Hearth answers 401 (it restarted, or
// the sign-in ended) "Sign in again", and hides everything else it showed.
// Both messages are in the page (#live-lost), hidden; this only chooses
// one. When a request succeeds again (signed in from another tab), the
// page reloads to show what is true now.
"use strict";
(function () {
  var state = "";
  function show(next) {
    var box = document.getElementById("live-lost");
    if (!box || state === next) {
      return;
    }
    state = next;
    document.body.classList.add("hearth-lost");
    box.hidden = false;
    box.querySelectorAll("[data-lost]").forEach(function (el) {
      el.hidden = el.getAttribute("data-lost") !== next;
    });
    var msg = box.querySelector('[data-lost="' + next + '"]');
    if (msg) {
      document.title = msg.getAttribute("data-title") + " · Hearth control panel";
    }
  }
  document.addEventListener("htmx:sendError", function () {
    show("down");
  });
  document.addEventListener("htmx:responseError", function (e) {
    var xhr = e.detail && e.detail.xhr;
    if (xhr && xhr.status === 401) {
      show("signin");
    }
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var xhr = e.detail && e.detail.xhr;
    if (state !== "" && e.detail.successful && xhr && xhr.status >= 200 && xhr.status < 300) {
      state = "";
      window.location.reload();
    }
  });
})();
