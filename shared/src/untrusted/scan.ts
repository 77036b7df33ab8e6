import { hasInvisible, neutralizeInvisible } from './neutralize.js';

/** Something in text from outside that reads as aimed at the model rather than describing data. */
export interface TextFinding {
  /** What was found, in a few words, with the text that matched: "hidden instruction `<IMPORTANT>`". */
  readonly reason: string;
}

interface Rule {
  readonly pattern: RegExp;
  readonly what: string;
}

/**
 * Phrases that address the model instead of describing a tool: pseudo-system tags, requests to
 * drop earlier instructions or to keep something from the user, and orders to do something first.
 * Each is specific enough that an honest description rarely says it.
 */
const INSTRUCTION_RULES: readonly Rule[] = [
  { pattern: /<\/?\s*(important|system|instructions?|admin|assistant|user|secret|hidden|critical|prompt|context|tool_instructions?)\b[^>]{0,40}>/i, what: 'hidden instruction' },
  { pattern: /\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|other|preceding)\s+(instructions?|prompts?|rules?|directions?)/i, what: 'instruction to drop earlier instructions' },
  { pattern: /\b(do\s+not|don'?t|never)\s+(tell|mention|inform|reveal|show|notify|alert)\b[^.\n]{0,60}\buser\b/i, what: 'instruction to keep something from the user' },
  { pattern: /\bbefore\s+(using|calling|invoking|running)\b[^.\n]{0,80}\b(read|send|call|fetch|upload|pass|include|invoke)\b/i, what: 'instruction to do something first' },
  { pattern: /\byou\s+(must|should|have\s+to|need\s+to|are\s+required\s+to)\s+(always|never|secretly|immediately|now)\b/i, what: 'order aimed at the model' },
  { pattern: /\byou\s+must\s+(call|invoke|read|send|forward|upload|ignore|tell|reveal|run|execute)\b[^.\n]{0,60}\b(tool|file|key|token|secret|content|conversation|instructions?|password|credentials?)\b/i, what: 'order aimed at the model' },
  // Spaces, not \s: a \s* from every line break would walk all the blank lines after it, again and again.
  { pattern: /(^|\n)[ \t]{0,40}(system|assistant|human|developer)[ \t]{0,40}:/i, what: 'role marker' },
  { pattern: /\[\/?\s*(INST|SYSTEM)\s*\]|<\|im_(start|end)\|>/i, what: 'role marker' },
  // Markdown a human skims past: a comment is not rendered, an image is fetched (with whatever its URL carries).
  { pattern: /<!--/, what: 'hidden comment' },
  { pattern: /!\[[^\]]{0,100}\]\(\s*https?:/i, what: 'image link that would be fetched' },
];

/**
 * Files an honest tool description has no reason to name: keys, credentials, client configs.
 * Bounded by what is not a letter or digit (not \b), so `backup_id_rsa` and
 * `read_claude_desktop_config` count.
 */
const SENSITIVE_PATH =
  /(~|\$HOME|%USERPROFILE%)?[\\/]?\.ssh(?![A-Za-z0-9])|(?<![A-Za-z0-9])id_(rsa|dsa|ecdsa|ed25519)(?![A-Za-z0-9])|(^|[\s"'`(/\\])\.env(?![A-Za-z0-9])|(?<![A-Za-z0-9])mcp\.json|(?<![A-Za-z0-9])claude_desktop_config|\.aws[\\/]credentials|\.netrc(?![A-Za-z0-9])|\.git-credentials|\.npmrc(?![A-Za-z0-9])|\.pgpass(?![A-Za-z0-9])/i;

const HORIZONTAL_SPACE = new Set([' ', '\t', '\r', '\u00A0', '\u1680', '\u202F', '\u205F', '\u3000', ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i))]);
const LINE_BREAK = new Set(['\n', '\u2028', '\u2029']);
// Blank-looking letters (braille blank, Hangul fillers): no honest description needs a run of them.
const BLANK_LETTER = new Set(['\u2800', '\u115F', '\u1160', '\u3164', '\uFFA0']);

/** Spaces after text on one line that push what follows out of a narrow view. */
const MAX_GAP = 19;
/** Indentation at the start of a line (a template literal's, say) is ordinary up to this. */
const MAX_INDENT = 59;
/** Line breaks in a row before more text: room to hide a paragraph below the fold. */
const MAX_BREAKS = 7;
const MAX_BLANK_LETTERS = 4;

/**
 * Whether blank space hides text that follows it: a wide gap inside a line, a deep indent, many
 * line breaks, or blank-looking letters. One pass, so a megabyte of spaces costs a megabyte of work.
 */
function hasPadding(text: string): boolean {
  let spaces = 0;
  let breaks = 0;
  let blanks = 0;
  let afterText = false;
  for (const char of text) {
    if (BLANK_LETTER.has(char)) {
      if (++blanks > MAX_BLANK_LETTERS) return true;
      spaces++;
    } else if (HORIZONTAL_SPACE.has(char)) {
      spaces++;
    } else if (LINE_BREAK.has(char)) {
      breaks++;
      spaces = 0;
      afterText = false;
    } else {
      if (breaks > MAX_BREAKS || spaces > (afterText ? MAX_GAP : MAX_INDENT)) return true;
      spaces = 0;
      breaks = 0;
      blanks = 0;
      afterText = true;
    }
  }
  return false;
}

/** Past this, a description is more than a tool needs to say, and room to hide something. */
export const LONG_TEXT_CHARS = 4000;

/** The matched text, short, on one line and with nothing hidden, so a reason can quote it. */
function quote(match: string): string {
  const oneLine = neutralizeInvisible(match.replace(/\s+/g, ' ').trim());
  return `\`${oneLine.length > 60 ? `${oneLine.slice(0, 57)}...` : oneLine}\``;
}

/**
 * What in `text` reads as aimed at the model: invisible characters, instruction-like phrases,
 * names of sensitive files, whitespace padding, and (for descriptions) an unusual length. One
 * finding per kind, with the text that matched.
 */
export function scanText(text: string, options: { readonly long?: boolean } = {}): TextFinding[] {
  const findings: TextFinding[] = [];
  if (hasInvisible(text)) findings.push({ reason: 'invisible characters (control, bidi, zero-width or tag characters)' });
  // Matched as a model would read it: fullwidth or styled letters folded (NFKC), invisible characters dropped.
  const plain = neutralizeInvisible(text.normalize('NFKC')).replace(/\\u\{[0-9A-F]+\}/g, '');
  const reported = new Set<string>();
  for (const rule of INSTRUCTION_RULES) {
    const match = rule.pattern.exec(plain);
    if (!match || reported.has(rule.what)) continue;
    reported.add(rule.what);
    findings.push({ reason: `${rule.what} ${quote(match[0])}` });
  }
  const path = SENSITIVE_PATH.exec(plain);
  if (path) findings.push({ reason: `names a sensitive file ${quote(path[0])}` });
  if (hasPadding(text)) findings.push({ reason: 'long whitespace padding that pushes text out of view' });
  if (options.long && text.length > LONG_TEXT_CHARS) findings.push({ reason: `very long (${text.length} characters)` });
  return findings;
}
