// Hearth control panel, Setup page: "Clear the clipboard", offered once
// after the tunnel key is saved, and "Copy" beside the tunnel ID to paste
// in ChatGPT. Both buttons stay hidden without JavaScript or the async
// Clipboard API (the page then says what to do by hand). The handlers are
// delegated from the document, so they keep working after htmx swaps the
// steps; buttons swapped in are revealed after each swap.
"use strict";
(function () {
  function clipboard() {
    return navigator.clipboard && navigator.clipboard.writeText ? navigator.clipboard : null;
  }
  function reveal() {
    if (!clipboard()) {
      return;
    }
    document.querySelectorAll("#clear-clipboard, [data-copy]").forEach(function (b) {
      b.hidden = false;
    });
  }
  function say(button, text) {
    var status = button.parentNode.querySelector("[role=status]");
    if (status) {
      status.textContent = text;
    }
  }
  document.addEventListener("DOMContentLoaded", reveal);
  document.addEventListener("htmx:afterSettle", reveal);
  document.addEventListener("click", function (e) {
    var button = e.target.closest("#clear-clipboard, [data-copy]");
    var cb = clipboard();
    if (!button || !cb) {
      return;
    }
    if (button.id === "clear-clipboard") {
      cb.writeText("").then(function () {
        say(button, "Clipboard cleared.");
      }, function () {
        say(button, "The browser did not let Hearth clear the clipboard: copy some other text to replace it.");
      });
      return;
    }
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) {
      return;
    }
    cb.writeText(field.value).then(function () {
      say(button, "Copied.");
    }, function () {
      field.select();
      say(button, "Select the text and copy it (Ctrl+C).");
    });
  });
})();
