// Hearth control panel, Setup page: the "Clear the clipboard" button
// offered once after the tunnel runtime key is saved. The button stays
// hidden without JavaScript or the async Clipboard API; the page then says
// how to replace the clipboard's content by hand.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var button = document.getElementById("clear-clipboard");
  var status = document.getElementById("clipboard-status");
  if (!button || !status || !navigator.clipboard || !navigator.clipboard.writeText) {
    return;
  }
  button.hidden = false;
  button.addEventListener("click", function () {
    navigator.clipboard.writeText("").then(function () {
      status.textContent = "Clipboard cleared.";
    }, function () {
      status.textContent = "The browser did not let Hearth clear the clipboard: copy some other text to replace it.";
    });
  });
});
