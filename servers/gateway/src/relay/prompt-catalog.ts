import type { Prompt } from '@modelcontextprotocol/sdk/types.js';
import { hasInvisible, neutralizeInvisible, scanText, toWireName } from '@bulkhead/core';
import { VALID_TOOL_NAME } from '../catalog.js';
import type { Downstream } from '../downstream/downstream.js';
import { promptPinKey, type QuarantineReason } from '../pins.js';
import type { RelayContext } from './context.js';
import { quarantineReason } from '../treatment.js';

/** One prompt of a downstream as the gateway exposes it. */
export interface PromptEntry {
  readonly namespace: string;
  /** The server's own name, sent back to it on prompts/get and completion/complete. */
  readonly name: string;
  /** `<ns>__<name>`, the wire form of tools. */
  readonly exposed: string;
  /** Its pin's key in pins.json (`prompt:<ns>:<name>`): what `bulkhead approve` takes. */
  readonly pinKey: string;
  /** The definition as clients are shown it: exposed name, a third-party one's invisible characters written out. */
  readonly shown: Prompt;
  /** The definition as its server listed it: what the pin hashes and a human approves. */
  readonly definition: Prompt;
  readonly thirdParty: boolean;
  /** What the scanner found in a third-party definition, one reason each. */
  readonly findings: readonly string[];
}

export interface QuarantinedPrompt {
  readonly entry: PromptEntry;
  readonly reason: QuarantineReason;
}

/** The strings of a prompt a model or a user reads, with where they stand. */
function promptTexts(prompt: Prompt): { where: string; text: string }[] {
  return [
    { where: 'its name', text: prompt.name.replace(/[_-]+/g, ' ') },
    ...(prompt.title !== undefined ? [{ where: 'its title', text: prompt.title }] : []),
    ...(prompt.description !== undefined ? [{ where: 'its description', text: prompt.description }] : []),
    ...(prompt.arguments ?? []).flatMap((argument) => [
      { where: `argument ${argument.name}`, text: argument.name },
      ...(argument.description !== undefined ? [{ where: `the description of argument ${argument.name}`, text: argument.description }] : []),
    ]),
  ];
}

/** The core's text scanner over what a prompt says of itself (references to other servers' tools are the tool scanner's). */
function promptFindings(prompt: Prompt): string[] {
  return [...new Set(promptTexts(prompt).flatMap(({ where, text }) => scanText(text, { long: where === 'its description' }).map((finding) => `${finding.reason} in ${where}`)))];
}

function neutralized(text: string | undefined): string | undefined {
  return text !== undefined && hasInvisible(text) ? neutralizeInvisible(text) : text;
}

function shownPrompt(prompt: Prompt, exposed: string, thirdParty: boolean): Prompt {
  if (!thirdParty) return { ...prompt, name: exposed };
  const title = neutralized(prompt.title);
  const description = neutralized(prompt.description);
  return {
    ...prompt,
    name: exposed,
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(prompt.arguments
      ? {
          arguments: prompt.arguments.map((argument) => {
            const argumentDescription = neutralized(argument.description);
            return { ...argument, ...(argumentDescription !== undefined ? { description: argumentDescription } : {}) };
          }),
        }
      : {}),
  };
}

/** A name that is not a valid one, as a line of the report can hold it: on one line, nothing hidden, at most 100 characters. */
function reportedName(name: string): string {
  const shown = neutralizeInvisible(JSON.stringify(name).slice(1, -1));
  return shown.length > 100 ? `${shown.slice(0, 97)}...` : shown;
}

/** Why a prompt waits for a human and how the human lets it through, in one line (the words of a tool's). */
export function describePromptQuarantine({ entry, reason }: QuarantinedPrompt): string {
  return `prompt ${entry.exposed} is quarantined (${quarantineReason(reason, entry.findings, 'prompt')}); a human approves it with \`bulkhead approve ${entry.pinKey}\``;
}

/** The refusal of prompts/get for a quarantined prompt: what happened and the command that lets it through. */
export function quarantinedPromptRefusal({ entry, reason }: QuarantinedPrompt): string {
  const approve = `a human must review it and run \`bulkhead approve ${entry.pinKey}\``;
  if (reason === 'changed') return `Prompt ${entry.exposed} changed its definition since it was approved and is quarantined; ${approve}`;
  if (reason === 'suspicious') return `Prompt ${entry.exposed} is quarantined: its definition looks aimed at the model (${entry.findings.join('; ')}); ${approve}`;
  return `Prompt ${entry.exposed} is a new third-party prompt and is quarantined until approved (approve_new_tools in bulkhead.yaml); ${approve}`;
}

/**
 * Every prompt of every server that is up, under its namespaced name, pinned like tools: a
 * definition that changed, a suspicious one no human approved, or (with approve_new_tools) a new
 * third-party one waits for `bulkhead approve prompt:<ns>:<name>` and is neither listed nor got.
 * Rebuilt when a server's prompts are read, a server comes up or goes away, and when pins.json
 * changed (an approval in another process).
 */
export class PromptCatalog {
  private usable = new Map<string, PromptEntry>();
  private quarantine = new Map<string, QuarantinedPrompt>();
  private notes: string[] = [];
  private stale = true;
  private pinsVersion = -1;

  constructor(private readonly context: RelayContext) {}

  /** Marks the catalog for a rebuild (a server's prompts or its state changed). */
  invalidate(): void {
    this.stale = true;
  }

  private current(): void {
    if (this.stale || this.context.pins.version !== this.pinsVersion) this.rebuild();
  }

  private entriesOf(downstream: Downstream, rejected: string[]): PromptEntry[] {
    const namespace = downstream.namespace;
    const thirdParty = !this.context.builtins.has(namespace);
    const scanned = thirdParty && !downstream.spec.trust.has('descriptions');
    return downstream.lists.prompts.flatMap((prompt) => {
      if (!VALID_TOOL_NAME.test(prompt.name)) {
        rejected.push(`prompt ${namespace}:${reportedName(prompt.name)} is left out: prompt names may hold only letters, digits, _ and - (at most 64)`);
        return [];
      }
      const exposed = toWireName(namespace, prompt.name);
      return [{ namespace, name: prompt.name, exposed, pinKey: promptPinKey(namespace, prompt.name), shown: shownPrompt(prompt, exposed, thirdParty), thirdParty, findings: scanned ? promptFindings(prompt) : [], definition: prompt }];
    });
  }

  private rebuild(): void {
    const notes: string[] = [];
    const candidates: PromptEntry[] = [];
    // In the configuration's order, so a listing does not change order from one start to the next.
    for (const downstream of this.context.downstreams.values()) {
      if (downstream.state === 'ready') candidates.push(...this.entriesOf(downstream, notes));
    }
    // Two prompts that would share an exposed name (`a` + `b__c` and `a__b` + `c`, or one listed twice) would share their gets too: neither is listed.
    const byExposed = new Map<string, number>();
    for (const entry of candidates) byExposed.set(entry.exposed, (byExposed.get(entry.exposed) ?? 0) + 1);
    for (const [exposed, count] of byExposed) if (count > 1) notes.push(`${count} prompts would be ${exposed} on the wire; none is listed`);
    const unique = candidates.filter((entry) => byExposed.get(entry.exposed) === 1);
    const held = this.context.pins.checkPrompts(
      unique.map((entry) => ({
        key: entry.pinKey,
        prompt: entry.definition,
        suspicious: this.context.config.quarantine_suspicious && entry.findings.length > 0,
        approveWhenNew: this.context.config.approve_new_tools && entry.thirdParty,
      })),
    );
    const usable = new Map<string, PromptEntry>();
    const quarantine = new Map<string, QuarantinedPrompt>();
    for (const entry of unique) {
      const reason = held.get(entry.pinKey);
      if (reason) quarantine.set(entry.exposed, { entry, reason });
      else usable.set(entry.exposed, entry);
    }
    this.usable = usable;
    this.quarantine = quarantine;
    this.notes = [...notes, ...[...quarantine.values()].map(describePromptQuarantine)];
    this.stale = false;
    this.pinsVersion = this.context.pins.version;
  }

  /** The prompts listed, in order. */
  entries(): PromptEntry[] {
    this.current();
    return [...this.usable.values()];
  }

  get(exposed: string): PromptEntry | undefined {
    this.current();
    return this.usable.get(exposed);
  }

  quarantined(exposed: string): QuarantinedPrompt | undefined {
    this.current();
    return this.quarantine.get(exposed);
  }

  /** Prompts left out (invalid or colliding names) or quarantined, one line each. */
  problems(): readonly string[] {
    this.current();
    return this.notes;
  }
}

const catalogs = new WeakMap<RelayContext, PromptCatalog>();

/** The one prompt catalog of a gateway, shared by the prompts and completions relays. */
export function promptCatalogOf(context: RelayContext): PromptCatalog {
  let catalog = catalogs.get(context);
  if (!catalog) catalogs.set(context, (catalog = new PromptCatalog(context)));
  return catalog;
}
