/**
 * Whether a URI is one that an RFC 6570 template of a server expands to, for routing a read to
 * the server whose template it is. Templates come from third-party servers, so this is not a
 * regular expression built from them (`{+a}x{+b}x{+c}` over a long URI backtracks for ever): the
 * template is cut into literals and variables, and the URI is walked once per part, keeping the
 * set of positions reachable so far. Level 1 `{var}` and the `{+var}`, `{#var}`, `{/var}`,
 * `{.var}`, `{?var}` and `{&var}` forms are understood; an expression of another form never
 * matches, so its URIs are read as `bulkhead://<ns>/<uri>`.
 */

/** Longest URI matched against templates: URLs longer than this are not used in practice. */
export const MAX_MATCHED_URI_LENGTH = 8192;
/** A template with more parts than this matches nothing (it is listed, and read by its bulkhead:// form). */
const MAX_TEMPLATE_PARTS = 64;

/** One run of characters a variable may expand to, after its operator's prefix. */
interface VariablePart {
  readonly prefix: string;
  /** Whether a character may occur in the variable's value. */
  readonly allows: (char: string) => boolean;
}
type TemplatePart = { readonly literal: string } | { readonly variable: VariablePart };

const notSlash = (char: string) => char !== '/';
const anything = () => true;
const notFragment = (char: string) => char !== '#';

/** The value class of each operator: simple and path segments stop at `/`; reserved forms take any character. */
const OPERATORS: Readonly<Record<string, VariablePart>> = {
  '': { prefix: '', allows: notSlash },
  '+': { prefix: '', allows: anything },
  '#': { prefix: '#', allows: anything },
  '/': { prefix: '/', allows: notSlash },
  '.': { prefix: '.', allows: notSlash },
  '?': { prefix: '?', allows: notFragment },
  '&': { prefix: '&', allows: notFragment },
};

const VARIABLE_LIST = /^[A-Za-z0-9_.%,*]+$/;

/** The template's parts, or undefined when it holds an expression this matcher does not understand. */
function parseTemplate(template: string): TemplatePart[] | undefined {
  const parts: TemplatePart[] = [];
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf('{');
    if (open < 0) {
      parts.push({ literal: rest });
      break;
    }
    if (open > 0) parts.push({ literal: rest.slice(0, open) });
    const close = rest.indexOf('}', open);
    if (close < 0) return undefined;
    const expression = rest.slice(open + 1, close);
    const operator = /^[+#/.?&]/.test(expression) ? expression[0]! : '';
    const names = expression.slice(operator.length);
    const variable = OPERATORS[operator];
    if (!variable || !VARIABLE_LIST.test(names)) return undefined;
    // An exploded path (`{/segments*}`) spans several segments.
    parts.push({ variable: operator === '/' && names.endsWith('*') ? { prefix: '/', allows: anything } : variable });
    rest = rest.slice(close + 1);
  }
  return parts.length <= MAX_TEMPLATE_PARTS ? parts : undefined;
}

/** The literal text a template starts with, which every URI it expands to starts with too. */
function literalHead(parts: readonly TemplatePart[]): string {
  const first = parts[0];
  return first && 'literal' in first ? first.literal : '';
}

export function matchesTemplate(template: string, uri: string): boolean {
  if (uri.length > MAX_MATCHED_URI_LENGTH) return false;
  const parts = parseTemplate(template);
  if (!parts || !uri.startsWith(literalHead(parts))) return false;
  // reachable[i]: the parts so far can expand to exactly uri.slice(0, i).
  let reachable = new Uint8Array(uri.length + 1);
  reachable[0] = 1;
  for (const part of parts) {
    const next = new Uint8Array(uri.length + 1);
    if ('literal' in part) {
      for (let at = 0; at + part.literal.length <= uri.length; at++) if (reachable[at] && uri.startsWith(part.literal, at)) next[at + part.literal.length] = 1;
    } else {
      const { prefix, allows } = part.variable;
      // A run of allowed characters (at least one) that starts where a prefix ends at a reachable position.
      let inRun = false;
      for (let at = 0; at < uri.length; at++) {
        const starts = at >= prefix.length && reachable[at - prefix.length] === 1 && uri.startsWith(prefix, at - prefix.length);
        inRun = (inRun || starts) && allows(uri[at]!);
        if (inRun) next[at + 1] = 1;
      }
    }
    reachable = next;
  }
  return reachable[uri.length] === 1;
}
