import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { PathGlobSet } from '../paths/globs.js';
import { isPathLikeName, isPathValue, pathValueForms } from '../paths/path-values.js';
import { CODE_ENTRIES, PERSISTENCE_ENTRIES, POLICY_GLOBS, SECRET_GLOBS, type ProtectedEntry } from '../paths/protected.js';
import { isInside } from '../paths/roots.js';
import { neutralizeInvisible } from '../untrusted/neutralize.js';
import type { PermissionGate } from './gate.js';

interface ProtectedRule {
  /** As the message shows it, e.g. `.env*` or `.ssh/`. */
  readonly glob: string;
  readonly kind: 'file' | 'folder';
  /** What the entry is to the user, e.g. `credentials`. */
  readonly category: string;
}

const secretRule = (glob: string): ProtectedRule => ({ glob, kind: glob.endsWith('/') ? 'folder' : 'file', category: 'credentials' });
const entryRule =
  (category: string) =>
  (entry: ProtectedEntry): ProtectedRule => ({ glob: entry.kind === 'folder' && !entry.path.includes('/') ? `${entry.path}/` : entry.path, kind: entry.kind, category });

/**
 * The protected set as fs_write refuses it (a third-party tool may write): credentials, git
 * internals, configuration that becomes code, persistence points and Bulkhead's policy files.
 * Every entry is matched in any folder: the gateway cannot know which folder a third-party
 * server resolves a path against, nor where its home folder is.
 */
const RULES: readonly ProtectedRule[] = [
  ...SECRET_GLOBS.map(secretRule),
  { glob: '.git/', kind: 'folder', category: 'git internals' },
  ...CODE_ENTRIES.map(entryRule('configuration that becomes code')),
  ...PERSISTENCE_ENTRIES.map(entryRule('start-up configuration that runs programs')),
  ...POLICY_GLOBS.map((glob): ProtectedRule => ({ glob, kind: 'file', category: 'Bulkhead policy' })),
];

/** A glob that names a path from a root (`.config/git`) made to match below any folder, as a bare name already does. */
function floating(glob: string): string {
  return glob.replace(/\/$/, '').includes('/') ? `**/${glob}` : glob;
}

/** By glob, the first rule of each: `.ssh/` is credentials before it is a persistence point. */
const RULE_OF_GLOB = new Map<string, ProtectedRule>();
for (const rule of RULES) if (!RULE_OF_GLOB.has(floating(rule.glob))) RULE_OF_GLOB.set(floating(rule.glob), rule);
/** Compared without case: on a case-insensitive filesystem `.ENV` is `.env`. */
const PROTECTED = new PathGlobSet([...RULE_OF_GLOB.keys()], { ignoreCase: true });

/** A path-like argument that names a protected entry. */
export interface ProtectedArgument {
  /** Where in the arguments: `path`, `paths[1]`, `edits[0].path`. */
  readonly at: string;
  /** The name the value sits under (`path` for `edits[0].path`): what an allow rule names. */
  readonly key: string;
  /** The value as sent. */
  readonly value: string;
  /** The form of it that names the entry (normalised, decoded): what an allow rule is compared with. */
  readonly form: string;
  /** Why it is protected, e.g. `a protected file (credentials: .env*)`. */
  readonly why: string;
}

export interface ProtectedArgumentOptions {
  /** The tool's input JSON Schema, for arguments whose `format` says they are URIs. */
  readonly inputSchema?: unknown;
  /**
   * Where the server resolves a relative path (a stdio server's working folder). Given, the server
   * runs on this machine, and a path that goes through a symlink is checked where it leads too.
   */
  readonly cwd?: string;
  /** The control-plane folder: protected wherever it is. */
  readonly controlDir?: string;
}

interface SchemaNode {
  readonly format?: unknown;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
}

function schemaNode(value: unknown): SchemaNode | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as SchemaNode) : undefined;
}

function isUriFormat(schema: SchemaNode | undefined): boolean {
  return schema?.format === 'uri' || schema?.format === 'uri-reference';
}

/** Why `form` is protected, or undefined. */
function protection(form: string, options: ProtectedArgumentOptions): string | undefined {
  if (options.controlDir !== undefined && (isAbsolute(form) || options.cwd !== undefined)) {
    const absolute = isAbsolute(form) ? form : resolve(options.cwd!, form);
    if (isInside(options.controlDir, absolute) || isInside(options.controlDir.toLowerCase(), absolute.toLowerCase())) {
      return `inside the control-plane folder (${options.controlDir})`;
    }
  }
  // An absolute path is matched by its segments like a relative one.
  const matched = PROTECTED.match(form.replace(/^\/+/, ''));
  if (matched === undefined) return undefined;
  const rule = RULE_OF_GLOB.get(matched)!;
  if (rule.kind === 'file') return `a protected file (${rule.category}: ${rule.glob})`;
  return `${isFolderItself(form, rule) ? 'a protected folder' : 'inside a protected folder'} (${rule.category}: ${rule.glob})`;
}

/**
 * Where `form` really leads on this machine when a symlink is on the way (`notes.txt -> .env`), or
 * undefined. A missing last component (a file a tool would create) is resolved through its folder.
 */
function symlinkTarget(form: string, cwd: string): string | undefined {
  const absolute = resolve(cwd, form);
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch {
    try {
      real = join(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return undefined;
    }
  }
  return real === absolute ? undefined : real;
}

/** Whether `form` ends at the folder a rule names (`.ssh`, `a/.config/git`) rather than below it; folder entries are plain names. */
function isFolderItself(form: string, rule: ProtectedRule): boolean {
  const folder = rule.glob.replace(/\/$/, '').toLowerCase();
  const lower = form.toLowerCase();
  return lower === folder || lower.endsWith(`/${folder}`);
}

/**
 * Every path-like string in a third-party tool's arguments that names a protected entry, in any
 * of the forms a server could take it to have. A string is path-like by its name (see
 * isPathLikeName; an array's items by the array's, a `name` inside an object under a path-like
 * name too), by its schema (`format: uri` or `uri-reference`) or by being a `file:` URL.
 */
export function findProtectedArguments(args: Readonly<Record<string, unknown>>, options: ProtectedArgumentOptions = {}): ProtectedArgument[] {
  const found: ProtectedArgument[] = [];
  const visit = (value: unknown, key: string, at: string, schema: SchemaNode | undefined, pathLike: boolean) => {
    if (typeof value === 'string') {
      if (!isPathValue(value, pathLike || isUriFormat(schema))) return;
      const written = pathValueForms(value);
      const check = (forms: readonly string[]) =>
        forms.some((form) => {
          const why = protection(form, options);
          if (why !== undefined) found.push({ at, key, value, form, why });
          return why !== undefined;
        });
      // Where symlinks lead is looked up only for a value whose spellings name nothing protected.
      const cwd = options.cwd;
      if (!check(written) && cwd !== undefined) check(written.flatMap((form) => symlinkTarget(form, cwd) ?? []));
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, key, `${at}[${index}]`, schemaNode(schema?.items), pathLike));
    } else if (value !== null && typeof value === 'object') {
      for (const [inner, item] of Object.entries(value)) {
        visit(item, inner, `${at}.${inner}`, schemaNode(schema?.properties?.[inner]), isPathLikeName(inner) || (pathLike && inner === 'name'));
      }
    }
  };
  const root = schemaNode(options.inputSchema);
  for (const [key, value] of Object.entries(args)) visit(value, key, key, schemaNode(root?.properties?.[key]), isPathLikeName(key));
  return found;
}

export interface ProtectedArgumentCheck extends ProtectedArgumentOptions {
  readonly qualifiedName: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** The permission policy whose allow rules may lift the deny; none lifts it without one. */
  readonly permissions?: PermissionGate;
  /** The bulkhead.yaml that could grant the server `trust: paths`, for the message. */
  readonly trustFile: string;
}

const MAX_SHOWN_CHARS = 200;

function shown(text: string): string {
  const visible = neutralizeInvisible(text);
  return visible.length > MAX_SHOWN_CHARS ? `${visible.slice(0, MAX_SHOWN_CHARS)}…` : visible;
}

/**
 * The default deny of the protected set for a third-party tool without `trust: paths`: the
 * refusal for the first protected argument no allow rule names, or undefined when the call may
 * go on to the permission gate. The message names the argument, the value, the rule and both
 * ways to allow it.
 */
export function protectedArgumentRefusal(check: ProtectedArgumentCheck): string | undefined {
  const hit = findProtectedArguments(check.args, check).find((candidate) => check.permissions?.allowRuleFor(check.qualifiedName, candidate.key, candidate.form) === undefined);
  if (!hit) return undefined;
  const value = hit.form === hit.value ? shown(hit.value) : `${shown(hit.value)} (${shown(hit.form)})`;
  const permissionsFile = check.permissions?.file ?? 'permissions.yaml';
  return (
    `Permission denied: ${check.qualifiedName}'s argument ${hit.at} names ${value}, ${hit.why}. ` +
    `Third-party tools may not touch the protected set; to allow it, add \`${check.qualifiedName}(${hit.key}=${shown(hit.form)})\` under allow: in ${permissionsFile}, ` +
    `or give the server trust: paths in ${check.trustFile}. Nothing was run.`
  );
}
