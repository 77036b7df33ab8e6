/**
 * The console's only script and stylesheet, served from its own origin (the CSP forbids inline
 * ones). The script is an extra: every page works without it.
 */

/**
 * Listens to `<base>/events` and, on `changed`, fetches the page again and swaps its `<main>`
 * in place, on pages the layout marks live (`data-live` on body). A burst of changes is one fetch.
 */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var body = document.body;
  if (!body || body.dataset.live !== 'true' || typeof EventSource === 'undefined') return;
  var pending = false;
  function refresh() {
    if (pending) return;
    pending = true;
    setTimeout(function () {
      fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
        .then(function (response) { return response.ok ? response.text() : undefined; })
        .then(function (text) {
          pending = false;
          if (text === undefined) return;
          var next = new DOMParser().parseFromString(text, 'text/html').querySelector('main');
          var current = document.querySelector('main');
          if (!next || !current) return;
          var open = Array.prototype.map.call(current.querySelectorAll('details[open][id]'), function (d) { return d.id; });
          current.replaceWith(next);
          open.forEach(function (id) { var d = document.getElementById(id); if (d) d.open = true; });
          document.dispatchEvent(new CustomEvent('bulkhead:refreshed'));
        })
        .catch(function () { pending = false; });
    }, 150);
  }
  var events = new EventSource(body.dataset.events);
  events.addEventListener('changed', refresh);
  // What changed between rendering the page and subscribing (or while reconnecting) was not announced.
  events.addEventListener('ready', refresh);
})();
`;

export const CONSOLE_STYLES = `:root { color-scheme: light dark; --line: #8884; --add: #1a7f3733; --del: #cf222e33; --muted: #777; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; }
header { display: flex; gap: 1.5rem; align-items: baseline; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header strong { font-size: 1.05rem; }
nav a { margin-right: 1rem; text-decoration: none; }
nav a[aria-current=page] { font-weight: 600; text-decoration: underline; }
main { padding: 1rem 1.2rem; max-width: 72rem; }
h1 { font-size: 1.3rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
.outcome { padding: .6rem .8rem; border-radius: 4px; margin-bottom: 1rem; border: 1px solid var(--line); }
.outcome.ok { background: var(--add); }
.outcome.refused { background: var(--del); }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .8rem 1rem; margin-bottom: 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 .8rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #8881; padding: .5rem .7rem; border-radius: 4px; margin: .3rem 0 .8rem; font-size: 13px; }
.diff .add { background: var(--add); display: block; }
.diff .del { background: var(--del); display: block; }
.diff .hunk { color: var(--muted); display: block; }
.decisions { display: flex; gap: .5rem; flex-wrap: wrap; }
button { font: inherit; padding: .35rem .8rem; border-radius: 4px; border: 1px solid var(--line); cursor: pointer; }
button.allow { background: var(--add); }
button.deny { background: var(--del); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.muted { color: var(--muted); }
footer { padding: .6rem 1.2rem; color: var(--muted); font-size: 13px; }
.side-by-side { table-layout: fixed; font: 13px/1.4 ui-monospace, monospace; }
.side-by-side td { border-bottom: none; padding: 0 .4rem; }
.side-by-side col.ln { width: 3.2em; }
.side-by-side td.ln { text-align: right; color: var(--muted); }
.side-by-side td.code { white-space: pre-wrap; overflow-wrap: anywhere; }
.nowrap { white-space: nowrap; }
form.filters { display: flex; gap: .8rem; flex-wrap: wrap; align-items: end; margin: 0 0 .8rem; }
`;
