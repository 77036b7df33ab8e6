import { readFileSync, renameSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Prompt, Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, RISK_META, sha256, SUBJECT_META } from '@bulkhead/core';

export const PINS_FILE = 'pins.json';
/** A definition is kept beside its hash up to this size (canonical JSON), so pins.json stays small. */
export const MAX_KEPT_DEFINITION_BYTES = 64 * 1024;

/** What a pin keeps of a definition: exactly what its hash covers (see definitionSubject). */
type KeptDefinition = Record<string, unknown>;

interface PinRecord {
  /** The definition in use; absent while a tool held back on first sight waits for its first approval. */
  sha256?: string;
  /** The definition `sha256` is the hash of, for a human to compare a changed one with; absent when too large or pinned by an older version. */
  definition?: KeptDefinition;
  first_seen: string;
  /** A changed definition waiting for a human's approval. */
  pending_sha256?: string;
  /** The definition `pending_sha256` is the hash of, so the console can show it without a running gateway. */
  pending_definition?: KeptDefinition;
  /** Set when a human approved the definition in `sha256`, so the scanner does not hold it back again. */
  approved_at?: string;
}

/** Why a tool waits for a human: its definition changed, the scanner flagged it, or it is new and new tools wait. */
export type QuarantineReason = 'changed' | 'suspicious' | 'new';

/** One tool as a server lists it, with what the gateway thinks of its definition. */
export interface PinCandidate {
  readonly qualified: string;
  readonly tool: Tool;
  /** The scanner found something in it (and quarantine_suspicious is on). */
  readonly suspicious: boolean;
  /** It waits for a human on first sight (approve_new_tools, third-party). */
  readonly approveWhenNew: boolean;
}

/** One prompt as a server lists it, with what the gateway thinks of its definition. */
export interface PromptPinCandidate {
  /** Its pin's key (promptPinKey). */
  readonly key: string;
  readonly prompt: Prompt;
  readonly suspicious: boolean;
  readonly approveWhenNew: boolean;
}

/** What one pin is checked with, tool or prompt: the subject is exactly what its hash covers. */
interface PinSubject {
  readonly key: string;
  readonly subject: Record<string, unknown>;
  readonly suspicious: boolean;
  readonly approveWhenNew: boolean;
}

interface PinFile {
  version: 1;
  /** Tools by `ns:tool`; prompts by `prompt:ns:name` (promptPinKey), so one approval path serves both. */
  tools: Record<string, PinRecord>;
}

/**
 * A prompt's pin key. A tool's name cannot hold `:`, so no tool's `ns:tool` is ever this, and
 * `bulkhead approve prompt:ns:name` names the prompt as plainly as `ns:tool` names a tool.
 */
export const PROMPT_PIN_PREFIX = 'prompt:';
export function promptPinKey(namespace: string, name: string): string {
  return `${PROMPT_PIN_PREFIX}${namespace}:${name}`;
}

/** What a model reads of a prompt (and a client shows for it): changing any of it quarantines the prompt. */
function promptSubject(prompt: Prompt): Record<string, unknown> {
  return { name: prompt.name, title: prompt.title, description: prompt.description, arguments: prompt.arguments };
}

export function promptDefinitionHash(prompt: Prompt): string {
  return sha256(canonicalJson(promptSubject(prompt)));
}

/**
 * What a model reads and sends (title, description, schemas) and what sets the tool's risk tier
 * (annotations, a built-in's declared risk and subject): changing any of them quarantines the tool.
 */
function definitionSubject(tool: Tool): Record<string, unknown> {
  const riskMeta = tool._meta ? { risk: tool._meta[RISK_META], subject: tool._meta[SUBJECT_META] } : undefined;
  return { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema, annotations: tool.annotations, riskMeta };
}

export function definitionHash(tool: Tool): string {
  return sha256(canonicalJson(definitionSubject(tool)));
}

/** The definition as a pin keeps it, or undefined when its canonical JSON is over the bound. */
function keptDefinition(tool: Tool): KeptDefinition | undefined {
  return keptSubject(definitionSubject(tool));
}

function keptSubject(subject: Record<string, unknown>): KeptDefinition | undefined {
  const canonical = canonicalJson(subject);
  return Buffer.byteLength(canonical) <= MAX_KEPT_DEFINITION_BYTES ? (JSON.parse(canonical) as KeptDefinition) : undefined;
}

/** A definition a pin holds, as the console shows it: the definition, or why it is not there. */
export type PinnedDefinition = { readonly kept: KeptDefinition } | { readonly missing: string };

/** A server's definition as a pin would keep it: a human is shown no more than a pin keeps. */
export function shownDefinition(tool: Tool): PinnedDefinition {
  const kept = keptDefinition(tool);
  return kept ? { kept } : { missing: `it is larger than ${MAX_KEPT_DEFINITION_BYTES / 1024} KB of JSON` };
}

/** A definition's hash with the definition, as far as the pin keeps it. */
export interface PinnedVersion {
  readonly sha256: string;
  readonly definition: PinnedDefinition;
}

/** One pin as a human reviews it: the definition in use and the one waiting. */
export interface PinView {
  readonly qualified: string;
  readonly firstSeen: string;
  readonly approvedAt?: string;
  /** Absent while a tool held back on first sight waits for its first approval. */
  readonly inUse?: PinnedVersion;
  readonly pending?: PinnedVersion;
}

/** A kept definition is shown only if it is still the one its hash names (pins.json may have been edited). */
function pinnedDefinition(hash: string, kept: KeptDefinition | undefined): PinnedDefinition {
  if (kept === undefined) return { missing: `only its hash is kept (sha256 ${hash}): it is larger than ${MAX_KEPT_DEFINITION_BYTES / 1024} KB, or was pinned by an older version of Bulkhead` };
  if (sha256(canonicalJson(kept)) !== hash) return { missing: `the definition kept in ${PINS_FILE} does not match its hash (sha256 ${hash}): the file was edited` };
  return { kept };
}

/**
 * Tool definitions pinned on first sight, in the control-plane folder. A definition that later
 * changes is quarantined until `bulkhead approve` (or the human, asked through elicitation)
 * accepts the new one; so is a suspicious definition no human approved yet, and with
 * approve_new_tools a third-party tool seen for the first time.
 *
 * Pins of first sight are held in memory until a tool is about to be used (`commit`, on the
 * first call) or something must be kept for a human (a changed definition, an approval): a
 * gateway that only listed or searched its tools (`bulkhead tools`, `search`, `doctor`) writes
 * nothing, while any session that called a tool leaves the pins the next one is checked against.
 */
export class PinStore {
  private data: PinFile = { version: 1, tools: {} };
  private loadedMtime = -1;
  /** Names pinned on first sight in this process and not written yet. */
  private readonly unsaved = new Set<string>();
  readonly file: string;

  constructor(controlDir: string) {
    this.file = join(controlDir, PINS_FILE);
  }

  /** Set while the file was already checked in this tick. */
  private checkedThisTick = false;

  /**
   * The pin file's modification time as last read or written, so others can tell it changed.
   * Checked once per tick: the calls read from one chunk of input all start in the same tick,
   * after that input arrived, so each still sees every change made before it was sent.
   */
  get version(): number {
    if (!this.checkedThisTick) {
      this.checkedThisTick = true;
      process.nextTick(() => {
        this.checkedThisTick = false;
      });
      this.reload();
    }
    return this.loadedMtime;
  }

  private reload(): void {
    let mtime: number;
    try {
      mtime = statSync(this.file).mtimeMs;
    } catch {
      return;
    }
    if (mtime === this.loadedMtime) return;
    const stored = JSON.parse(readFileSync(this.file, 'utf8')) as PinFile;
    // A pin of first sight not written yet outlives the reload (after `bulkhead approve`, say);
    // one another process wrote meanwhile is the one that counts.
    for (const name of this.unsaved) {
      const pin = this.data.tools[name];
      if (pin && !stored.tools[name]) stored.tools[name] = pin;
      else this.unsaved.delete(name);
    }
    this.data = stored;
    this.loadedMtime = mtime;
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(this.data, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
    this.loadedMtime = statSync(this.file).mtimeMs;
    this.unsaved.clear();
  }

  /** Writes the pins of first sight, once a tool is about to be used; nothing when all are written. */
  commit(): void {
    if (this.unsaved.size === 0) return;
    this.reload();
    this.save();
  }

  /**
   * Pins the tools seen for the first time (in memory until `commit`) and returns the ones that
   * wait for a human, with why: a definition that differs from the pinned one, a suspicious one no
   * human approved, a new one when new tools wait. Whatever waits is written at once (as
   * `pending_sha256`, with the definition beside it), so `bulkhead approve` or the console in
   * another process can show and accept it.
   */
  check(tools: readonly PinCandidate[]): Map<string, QuarantineReason> {
    return this.checkSubjects(tools.map(({ qualified, tool, suspicious, approveWhenNew }) => ({ key: qualified, subject: definitionSubject(tool), suspicious, approveWhenNew })));
  }

  /** `check` for prompts, pinned by promptPinKey in the same file: the same states, the same approvals. */
  checkPrompts(prompts: readonly PromptPinCandidate[]): Map<string, QuarantineReason> {
    return this.checkSubjects(prompts.map(({ key, prompt, suspicious, approveWhenNew }) => ({ key, subject: promptSubject(prompt), suspicious, approveWhenNew })));
  }

  private checkSubjects(subjects: readonly PinSubject[]): Map<string, QuarantineReason> {
    this.reload();
    const quarantined = new Map<string, QuarantineReason>();
    let changed = false;
    const hold = (qualified: string, pin: PinRecord, subject: Record<string, unknown>, hash: string, reason: QuarantineReason) => {
      quarantined.set(qualified, reason);
      if (pin.pending_sha256 === hash && pin.pending_definition !== undefined) return;
      const kept = keptSubject(subject);
      // A pin of an older version waiting with only the hash gets the definition beside it.
      if (pin.pending_sha256 === hash && kept === undefined) return;
      pin.pending_sha256 = hash;
      setDefinition(pin, 'pending_definition', kept);
      changed = true;
    };
    for (const { key: qualified, subject, suspicious, approveWhenNew } of subjects) {
      const hash = sha256(canonicalJson(subject));
      const pin = this.data.tools[qualified];
      if (!pin) {
        if (suspicious || approveWhenNew) {
          const held: PinRecord = { first_seen: new Date().toISOString() };
          this.data.tools[qualified] = held;
          hold(qualified, held, subject, hash, suspicious ? 'suspicious' : 'new');
        } else {
          const fresh: PinRecord = { sha256: hash, first_seen: new Date().toISOString() };
          setDefinition(fresh, 'definition', keptSubject(subject));
          this.data.tools[qualified] = fresh;
          this.unsaved.add(qualified);
        }
      } else if (pin.sha256 === undefined) {
        // Held back on first sight and never approved: it waits while it still must.
        if (suspicious || approveWhenNew) hold(qualified, pin, subject, hash, suspicious ? 'suspicious' : 'new');
        else {
          pin.sha256 = hash;
          setDefinition(pin, 'definition', keptSubject(subject));
          clearPending(pin);
          changed = true;
        }
      } else if (pin.sha256 === hash) {
        // An approved definition stays usable; one pinned unseen by a human waits once it looks suspicious.
        if (suspicious && !pin.approved_at) hold(qualified, pin, subject, hash, 'suspicious');
        else if (pin.pending_sha256) {
          clearPending(pin);
          changed = true;
        }
      } else {
        hold(qualified, pin, subject, hash, 'changed');
      }
    }
    if (changed) this.save();
    return quarantined;
  }

  /**
   * Accepts the pending definition of a quarantined tool (changed, suspicious or new); false when
   * nothing is pending, or when the pending definition is no longer the one the human reviewed
   * (`reviewed` is its hash).
   */
  approve(qualified: string, reviewed?: string): boolean {
    this.reload();
    const pin = this.data.tools[qualified];
    if (!pin?.pending_sha256 || (reviewed !== undefined && pin.pending_sha256 !== reviewed)) return false;
    pin.sha256 = pin.pending_sha256;
    setDefinition(pin, 'definition', pin.pending_definition);
    clearPending(pin);
    pin.approved_at = new Date().toISOString();
    this.save();
    return true;
  }

  pending(): string[] {
    this.reload();
    return Object.entries(this.data.tools)
      .filter(([, pin]) => pin.pending_sha256)
      .map(([name]) => name);
  }

  /** One tool's pin with the definitions it keeps, as written (pins of first sight not written yet included). */
  view(qualified: string): PinView | undefined {
    this.reload();
    const pin = this.data.tools[qualified];
    if (!pin) return undefined;
    return {
      qualified,
      firstSeen: pin.first_seen,
      ...(pin.approved_at ? { approvedAt: pin.approved_at } : {}),
      ...(pin.sha256 ? { inUse: { sha256: pin.sha256, definition: pinnedDefinition(pin.sha256, pin.definition) } } : {}),
      ...(pin.pending_sha256 ? { pending: { sha256: pin.pending_sha256, definition: pinnedDefinition(pin.pending_sha256, pin.pending_definition) } } : {}),
    };
  }

  /** Every tool whose definition waits for a human, as the pin file has it (no gateway needs to run). */
  waiting(): PinView[] {
    return this.pending().flatMap((qualified) => this.view(qualified) ?? []);
  }
}

function setDefinition(pin: PinRecord, key: 'definition' | 'pending_definition', kept: KeptDefinition | undefined): void {
  if (kept === undefined) delete pin[key];
  else pin[key] = kept;
}

function clearPending(pin: PinRecord): void {
  delete pin.pending_sha256;
  delete pin.pending_definition;
}
