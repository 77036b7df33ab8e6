export type Sniffed =
  | { readonly kind: 'text' }
  | { readonly kind: 'image'; readonly mimeType: string }
  | { readonly kind: 'binary'; readonly type: string };

export const SNIFF_BYTES = 8192;

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0) =>
  bytes.length >= at + signature.length && signature.every((b, i) => bytes[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

const IMAGES: readonly [readonly number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'],
  [[0xff, 0xd8, 0xff], 'image/jpeg'],
  [ascii('GIF87a'), 'image/gif'],
  [ascii('GIF89a'), 'image/gif'],
];

const BINARIES: readonly [readonly number[], string, number?][] = [
  [ascii('%PDF-'), 'application/pdf'],
  [[0x50, 0x4b, 0x03, 0x04], 'application/zip'],
  [[0x1f, 0x8b], 'application/gzip'],
  [[0x7f, 0x45, 0x4c, 0x46], 'application/x-elf (executable)'],
  [ascii('SQLite format 3\0'), 'application/vnd.sqlite3'],
  [[0x00, 0x61, 0x73, 0x6d], 'application/wasm'],
  [ascii('BZh'), 'application/x-bzip2'],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], 'application/x-xz'],
  [[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], 'application/x-7z-compressed'],
  [[0xca, 0xfe, 0xba, 0xbe], 'application/java-vm'],
  [[0x28, 0xb5, 0x2f, 0xfd], 'application/zstd'],
  [ascii('ustar'), 'application/x-tar', 257],
  [[0xff, 0xfe], 'text/plain; charset=utf-16le'],
  [[0xfe, 0xff], 'text/plain; charset=utf-16be'],
];

/** Decides from the first bytes whether a file is text, an image to show, or other binary. */
export function sniff(head: Uint8Array): Sniffed {
  for (const [signature, mimeType] of IMAGES) if (startsWith(head, signature)) return { kind: 'image', mimeType };
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return { kind: 'image', mimeType: 'image/webp' };
  for (const [signature, type, at] of BINARIES) if (startsWith(head, signature, at ?? 0)) return { kind: 'binary', type };
  if (head.includes(0)) return { kind: 'binary', type: 'unknown binary (contains NUL bytes)' };
  return { kind: 'text' };
}
