/**
 * The page's own script, served from the binary next to htmx (no inline script, so a strict CSP
 * holds): pauses polling while the tab is hidden, shows the "connection lost" banner when a poll
 * fails or times out (and clears it on the next good one) with OFFLINE in <title>, copies the verdict's title and time to
 * <title> and the header, and turns an approval's answer into a line of text in place of its buttons.
 */
export const STATUS_JS = `(function () {
  "use strict";
  function polled(elt) { return !!(elt && elt.hasAttribute && elt.hasAttribute("data-poll")); }
  // The element that sent the request. detail.elt is not: when a swap has replaced it, htmx repeats
  // afterRequest on a parent still in the page and overwrites detail.elt with that parent.
  function requester(event) {
    var config = event.detail.requestConfig;
    return (config && config.elt) || event.detail.elt;
  }
  var pageTitle = document.title;
  // Offline, the last-known data stays (greyed by the stylesheet) and the title says OFFLINE with the last verdict;
  // back online, the verdict's own title returns.
  function setOffline(offline) {
    document.body.classList.toggle("offline", offline);
    var banner = document.getElementById("connection-lost");
    if (banner) banner.hidden = !offline;
    var verdict = document.getElementById("section-verdict");
    var host = document.body.getAttribute("data-host") || "";
    if (offline) {
      var last = verdict && verdict.getAttribute("data-status");
      var title = "OFFLINE · " + host + (last ? " · last known " + last.toUpperCase() : "") + " · agentd";
      if (document.title !== title) document.title = title;
    } else if (verdict && verdict.getAttribute("data-title")) {
      document.title = verdict.getAttribute("data-title");
    } else if (document.title !== pageTitle) {
      document.title = pageTitle;
    }
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    // Hidden tab: no polling. A button inside the section still in flight: do not swap it away.
    if (polled(elt) && (document.visibilityState !== "visible" || elt.querySelector(".htmx-request"))) event.preventDefault();
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var elt = requester(event);
    if (polled(elt)) { setOffline(!event.detail.successful); return; }
    // An HTML answer has already replaced the form; anything else is told in the result line.
    if (elt.hasAttribute && elt.hasAttribute("data-approval-form") && elt.isConnected) showDecision(elt, event.detail.xhr);
  });
  document.addEventListener("htmx:beforeSwap", function (event) {
    var elt = event.detail.elt;
    var type = event.detail.xhr.getResponseHeader("content-type") || "";
    if (elt.hasAttribute && elt.hasAttribute("data-approval-form") && type.indexOf("text/html") !== 0) event.detail.shouldSwap = false;
  });
  document.addEventListener("htmx:sendError", function (event) { if (polled(requester(event))) setOffline(true); });
  // A hung worker accepts the connection and never answers: the poll's timeout is the only sign.
  document.addEventListener("htmx:timeout", function (event) { if (polled(requester(event))) setOffline(true); });
  // Each verdict fragment carries the tab title and the time of its data.
  document.addEventListener("htmx:afterSettle", function () {
    var verdict = document.getElementById("section-verdict");
    if (!verdict) return;
    var title = verdict.getAttribute("data-title");
    if (title && document.title !== title) document.title = title;
    var generated = document.querySelector("header.top .generated");
    var at = verdict.getAttribute("data-generated");
    if (generated && at) generated.textContent = at;
  });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible" && window.htmx) window.htmx.trigger(document.body, "refresh");
  });
  var LABELS = { allow_once: "Allowed once", allow_session: "Allowed for this session", deny: "Denied" };
  function showDecision(form, xhr) {
    var result = form.parentNode && form.parentNode.querySelector(".result");
    if (!result) return;
    var body = null;
    try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
    var text;
    if (xhr.status >= 200 && xhr.status < 300) {
      var decision = (body && body.decision) || form.getAttribute("data-last-decision");
      text = LABELS[decision] || "Decided";
      form.remove();
    } else if (xhr.status === 409) {
      text = "Already decided";
      form.remove();
    } else {
      text = "Failed: " + ((body && body.error && body.error.message) || ("HTTP " + xhr.status));
    }
    result.textContent = text;
    result.hidden = false;
  }
  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest ? event.target.closest("button[name=decision]") : null;
    if (button && button.form) button.form.setAttribute("data-last-decision", button.value);
  });
})();
`;
