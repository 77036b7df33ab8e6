import { resolve } from 'node:path';
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { z } from 'zod';
import { errorMessage, formatBytes, neutralizeInvisible, TRASH_ID, type Trash, type TrashListing, type TrashManifest } from '@bulkhead/core';
import { openTrash, restoreFromTrash } from '../../commands/trash.js';
import type { ActionOutcome, ConsolePage, ConsoleSources, Html, PageRequest } from '../page.js';
import { actionForm, timeText } from '../page-parts.js';

const SLUG = 'trash';
/** Entries listed at most, newest first. */
const TRASH_ROWS = 200;

function setupOf(sources: ConsoleSources) {
  return { controlDir: sources.controlDir, roots: sources.roots };
}

function what(entry: TrashManifest): string {
  if (entry.kind === 'folder') return `folder: ${entry.entries} ${entry.entries === 1 ? 'entry' : 'entries'}, ${formatBytes(entry.bytes)}`;
  return entry.kind === 'symlink' ? 'symlink' : `file, ${formatBytes(entry.bytes)}`;
}

function entryRow(entry: TrashManifest, request: PageRequest): Html {
  // A file name is the model's choice: invisible and direction-changing characters are written out.
  const path = neutralizeInvisible(entry.shown_as);
  return html`<tr data-trash="${entry.id}">
<td><code>${entry.id}</code></td>
<td>${timeText(entry.deleted_at)}</td>
<td class="path">${path}</td>
<td>${what(entry)}</td>
<td>${entry.reason === 'replaced' ? 'replaced by a write' : 'deleted'}</td>
<td>${actionForm(
    request,
    { slug: SLUG },
    'restore',
    { id: entry.id },
    html`<label>to <input name="to" placeholder="${path}" aria-label="restore ${path} to another path (optional)"></label> <button type="submit" class="allow">Restore</button>`,
  )}</td>
</tr>`;
}

async function render(sources: ConsoleSources, request: PageRequest): Promise<HtmlEscapedString> {
  let trash: Trash;
  let listing: TrashListing;
  try {
    trash = openTrash(setupOf(sources)).trash;
    listing = await trash.list();
  } catch (error) {
    return html`<p class="outcome refused">The trash cannot be read: ${errorMessage(error)}</p>`;
  }
  const problems = listing.problems.length > 0 ? html`<p>Folders of the trash that cannot be restored:</p><ul>${listing.problems.map((problem) => html`<li>${neutralizeInvisible(problem)}</li>`)}</ul>` : '';
  if (listing.entries.length === 0) return html`<p>The trash is empty (${trash.folder}).</p>${problems}`;
  return html`<p>What fs_write deleted or replaced, newest first: ${listing.entries.length} ${listing.entries.length === 1 ? 'entry' : 'entries'}, ${formatBytes(listing.bytes)}, in ${trash.folder}. A restore never overwrites: a path that exists now is refused. Leave "to" empty to restore where it was; a relative path is under the first root.</p>
<table id="trash">
<thead><tr><th>id</th><th>when</th><th>path</th><th>what</th><th>why</th><th>restore</th></tr></thead>
<tbody>${listing.entries.slice(0, TRASH_ROWS).map((entry) => entryRow(entry, request))}</tbody>
</table>
${listing.entries.length > TRASH_ROWS ? html`<p class="muted">… ${listing.entries.length - TRASH_ROWS} older entries (bulkhead trash list --limit N shows them).</p>` : ''}
${problems}`;
}

const restoreSchema = z.object({
  id: z.string().regex(TRASH_ID),
  to: z.string().max(4096).optional(),
});

async function restore(sources: ConsoleSources, form: URLSearchParams): Promise<ActionOutcome> {
  const parsed = restoreSchema.safeParse({ id: form.get('id'), to: form.get('to')?.trim() || undefined });
  if (!parsed.success) return { ok: false, message: 'The form did not name a trash entry; nothing was restored.' };
  const { id, to } = parsed.data;
  const first = sources.roots[0];
  try {
    const restored = await restoreFromTrash(setupOf(sources), id, to === undefined || first === undefined ? to : resolve(first, to));
    return { ok: true, message: restored.stdout.join(' ') };
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
}

/** What fs_write deleted or replaced, with a Restore per entry that never overwrites. */
export const trashPage: ConsolePage = {
  slug: SLUG,
  title: 'Trash',
  render,
  actions: { restore },
};
