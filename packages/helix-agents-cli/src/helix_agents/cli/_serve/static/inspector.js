// helix-store serve: follow a session page's new rows (docs/inspector.md, INS-7).
// The server sends a `change` event when the session's rows, activity, approvals or
// queued items change; the page then fetches itself and swaps in the new content.
"use strict";

function follow(main) {
  const session = main.dataset.session;
  const source = new EventSource("/session/events?id=" + encodeURIComponent(session));
  source.addEventListener("change", async () => {
    const response = await fetch(window.location.href, { headers: { Accept: "text/html" } });
    if (!response.ok) {
      return; // the session is gone, or the store failed: keep what is shown
    }
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.getElementById("main");
    if (fresh !== null) {
      main.replaceChildren(...fresh.childNodes);
      main.dataset.updated = String(Date.now());
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.getElementById("main");
  if (main !== null && main.dataset.session !== undefined) {
    follow(main);
  }
});
