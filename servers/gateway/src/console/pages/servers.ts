import { html } from 'hono/html';
import { neutralizeInvisible, redactText } from '@bulkhead/core';
import type { Downstream, DownstreamState } from '../../downstream/downstream.js';
import type { ConsolePage, ConsoleSources, Html } from '../page.js';
import { noGateway } from '../page-parts.js';

/** The supervisor's states in the words the page uses. */
const STATE_WORDS: Readonly<Record<DownstreamState, string>> = {
  starting: 'starting',
  ready: 'up',
  restarting: 'restarting',
  failed: 'given up',
  stopped: 'stopped',
};

function serverCard(downstream: Downstream): Html {
  const stderr = downstream.recentStderr;
  // The reason quotes the server's own words (its error, a URL): invisible characters are written out.
  const note = downstream.unavailableReason ?? (downstream.listWarning ? `${downstream.namespace}: ${downstream.listWarning}` : undefined);
  return html`<section class="card server" data-server="${downstream.namespace}">
<h2>${downstream.namespace}</h2>
<dl>
<dt>state</dt><dd class="state">${STATE_WORDS[downstream.state]}</dd>
<dt>kind</dt><dd>${downstream.spec.kind}${downstream.spec.builtin ? ' (built-in)' : ' (third-party)'}${downstream.spec.kind === 'http' ? html` <code>${neutralizeInvisible(redactText(downstream.spec.url))}</code>` : ''}</dd>
<dt>restarts</dt><dd class="restarts">${downstream.restartCount}</dd>
<dt>tools</dt><dd class="tools">${downstream.tools.length}</dd>
${note ? html`<dt>note</dt><dd>${neutralizeInvisible(note)}</dd>` : ''}
</dl>
${stderr.length > 0 ? html`<details><summary>last stderr lines</summary><pre class="stderr">${stderr.join('\n')}</pre></details>` : downstream.spec.kind === 'stdio' ? html`<p class="muted">No stderr output.</p>` : ''}
</section>`;
}

function render(sources: ConsoleSources): Html {
  const gateway = sources.gateway;
  if (!gateway) return noGateway('the state of its servers is not known here');
  const downstreams = [...gateway.downstreams.values()];
  if (downstreams.length === 0) return html`<p>The gateway runs no servers (bulkhead.yaml lists none).</p>`;
  return html`${downstreams.map(serverCard)}`;
}

/** Every downstream's state, restarts, tools and last stderr lines, from the live gateway. */
export const serversPage: ConsolePage = {
  slug: 'servers',
  title: 'Servers',
  live: true,
  render,
};
