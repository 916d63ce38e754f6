// The demo site's instrumentation hook (read by the tests and the benchmark, never by the agent):
// each page's own submit handler reports what it accepted or refused, and autosaving pages their drafts.
"use strict";
window.demoRecord = function (form, outcome, data, reason) {
  return fetch("/api/record", {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify({form, outcome, data, reason: reason || ""})});
};
// Replace the page's main content by a confirmation view (what a person sees after a submit).
window.demoConfirm = function (title, text) {
  const main = document.querySelector("main");
  main.innerHTML = "";
  const h = document.createElement("h2");
  h.textContent = title;
  const p = document.createElement("p");
  p.textContent = text;
  main.append(h, p);
};
// Show or clear the error of one field: the message goes in the element with id `${id}-error`.
window.demoFieldError = function (input, id, message) {
  const box = document.getElementById(id + "-error");
  box.textContent = message || "";
  box.hidden = !message;
  if (input) {
    if (message) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
  }
};
