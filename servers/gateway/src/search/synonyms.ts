// A small table of interchangeable words of tool vocabulary. A query word of a family also looks
// for the family's other words, at a lower weight than the word itself (see SYNONYM_WEIGHT in
// index.ts), so "remove a folder" reaches a tool described as "delete a directory".
//
// The rule for an entry: words that people and tool authors commonly use for the same operation or
// object across software of every kind (CRUD verbs, files, processes, the web, common abbreviations).
// Nothing here names a product, a server or a domain of its own; no entry was written to make a
// particular query of an evaluation set succeed. A word may sit in more than one family.

export const SYNONYM_FAMILIES: readonly (readonly string[])[] = [
  // operations
  ['read', 'view', 'show', 'display', 'open', 'print'],
  ['get', 'fetch', 'retrieve', 'obtain', 'load'],
  ['fetch', 'download'],
  ['write', 'save', 'store', 'persist'],
  ['create', 'make', 'new', 'add'],
  ['update', 'modify', 'change', 'edit', 'alter', 'amend'],
  ['delete', 'remove', 'erase', 'drop', 'destroy', 'purge', 'unlink', 'rm', 'del'],
  ['list', 'enumerate', 'ls', 'browse'],
  ['search', 'find', 'query', 'lookup', 'locate', 'seek'],
  ['move', 'rename', 'mv'],
  ['copy', 'duplicate', 'cp'],
  ['run', 'execute', 'exec', 'invoke', 'launch'],
  ['stop', 'kill', 'terminate', 'halt', 'abort', 'cancel'],
  ['start', 'begin', 'initiate'],
  ['compare', 'diff', 'difference', 'differ'],
  ['convert', 'translate', 'transform'],
  ['summary', 'summarize', 'overview'],
  ['send', 'post', 'submit'],
  // objects
  ['file', 'document', 'doc'],
  ['directory', 'folder', 'dir'],
  ['repository', 'repo'],
  ['database', 'db'],
  ['record', 'row', 'entry'],
  ['column', 'field'],
  ['url', 'link', 'uri'],
  ['web', 'internet', 'online', 'website', 'webpage'],
  ['image', 'picture', 'photo', 'img'],
  ['information', 'info', 'metadata', 'details'],
  ['configuration', 'config', 'settings', 'preferences'],
  ['message', 'msg'],
  ['email', 'mail'],
  ['error', 'failure', 'exception'],
];
