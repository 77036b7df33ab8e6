import { loadYamlFile } from '../config/yaml-file.js';
import { ANY_ARGUMENT, parseToolPattern, type ArgumentMatcher, type ToolPattern } from '../names.js';
import { canonicalPathValue, isPathLikeName, isPathValue, pathValueForms } from '../paths/path-values.js';
import { permissionsSchema, PERMISSIONS_FILE, type Autonomy, type Risk } from './schema.js';

export type ListName = 'allow' | 'ask' | 'deny' | 'always_ask';

interface Rule {
  readonly list: ListName;
  readonly pattern: ToolPattern;
  readonly line: number | undefined;
}

export interface CallSubject {
  readonly qualifiedName: string;
  readonly risk: Risk;
  readonly args: Readonly<Record<string, unknown>>;
  /** Name of the argument a bare `(glob)` matcher compares against. */
  readonly subjectArg?: string;
}

export interface Decision {
  readonly verdict: 'allow' | 'ask' | 'deny';
  /** Human-readable reason, naming the file and line that decided. */
  readonly reason: string;
  /** What would let the call run, for refusals. */
  readonly remedy?: string;
  /** An always_ask entry decided: every such call is put to the human, and no allow for the session covers it. */
  readonly alwaysAsk?: true;
  /**
   * What decided: a list's entry, or the autonomy table. Only a call the autonomy table decided
   * would run under an `allow:` entry for its tool (deny, always_ask and ask entries win over allow),
   * so only such a call can be allowed always.
   */
  readonly from: ListName | 'autonomy';
}

const MATRIX: Record<Autonomy, Record<Risk, Decision['verdict']>> = {
  read_only: { low: 'allow', medium: 'deny', high: 'deny' },
  supervised: { low: 'allow', medium: 'ask', high: 'deny' },
  full: { low: 'allow', medium: 'allow', high: 'allow' },
};

/** The loaded `permissions.yaml`, turned into a pure decision function. */
export class PermissionGate {
  private constructor(
    readonly file: string,
    readonly fileExists: boolean,
    readonly autonomy: Autonomy,
    /** How long a call nobody can confirm over MCP waits for its pending approval (approval_wait_ms). */
    readonly approvalWaitMs: number,
    private readonly rules: readonly Rule[],
    private readonly autonomyLine: number | undefined,
    private readonly allowLine: number | undefined,
  ) {}

  static load(configDir: string): PermissionGate {
    const loaded = loadYamlFile(configDir, PERMISSIONS_FILE, permissionsSchema);
    const rules: Rule[] = [];
    for (const list of ['deny', 'always_ask', 'ask', 'allow'] as const) {
      loaded.value[list].forEach((source, index) => {
        rules.push({ list, pattern: parseToolPattern(source), line: loaded.lineOf([list, index]) });
      });
    }
    const lineIfSet = (key: string) => (loaded.sets([key]) ? loaded.lineOf([key]) : undefined);
    return new PermissionGate(loaded.file, loaded.exists, loaded.value.autonomy, loaded.value.approval_wait_ms, rules, lineIfSet('autonomy'), lineIfSet('allow'));
  }

  /**
   * The same rules under an autonomy no higher than `ceiling` (a profile's), so a profile can
   * narrow the policy and never widen it.
   */
  narrowedTo(ceiling: Autonomy): PermissionGate {
    const order: readonly Autonomy[] = ['read_only', 'supervised', 'full'];
    const autonomy = order.indexOf(ceiling) < order.indexOf(this.autonomy) ? ceiling : this.autonomy;
    return new PermissionGate(this.file, this.fileExists, autonomy, this.approvalWaitMs, this.rules, this.autonomyLine, this.allowLine);
  }

  private where(line: number | undefined): string {
    return line ? `${this.file} line ${line}` : this.file;
  }

  /**
   * The allow rule that names this value of this argument (`tool(key=glob)` or `tool(*=glob)`),
   * if any: the one thing that lifts the default deny of the protected set for a third-party
   * tool. A rule without an argument matcher, or autonomy, does not.
   */
  allowRuleFor(qualifiedName: string, key: string, value: string): string | undefined {
    const rule = this.rules.find(
      (candidate) =>
        candidate.list === 'allow' &&
        candidate.pattern.argument !== undefined &&
        (candidate.pattern.argument.key === key || candidate.pattern.argument.key === ANY_ARGUMENT) &&
        candidate.pattern.matchesName(qualifiedName) &&
        candidate.pattern.argument.matches(value),
    );
    return rule?.pattern.source;
  }

  private firstMatch(list: ListName, subject: CallSubject): Rule | undefined {
    return this.rules.find((rule) => rule.list === list && ruleMatches(rule.pattern, subject, list !== 'allow'));
  }

  decide(subject: CallSubject): Decision {
    const name = subject.qualifiedName;
    const denied = this.firstMatch('deny', subject);
    if (denied) {
      return {
        verdict: 'deny',
        reason: `${name} is denied by ${this.where(denied.line)} (\`${denied.pattern.source}\`)`,
        remedy: `remove or narrow that deny entry`,
        from: 'deny',
      };
    }
    const alwaysAsk = this.firstMatch('always_ask', subject);
    if (alwaysAsk) {
      return {
        verdict: 'ask',
        reason: `${name} must be confirmed: ${this.where(alwaysAsk.line)} lists it under always_ask (\`${alwaysAsk.pattern.source}\`)`,
        remedy: `remove that always_ask entry and add \`${name}\` under allow: in ${this.file}`,
        alwaysAsk: true,
        from: 'always_ask',
      };
    }
    const ask = this.firstMatch('ask', subject);
    if (ask) {
      return {
        verdict: 'ask',
        reason: `${name} must be confirmed: ${this.where(ask.line)} lists it under ask (\`${ask.pattern.source}\`)`,
        remedy: `move it from ask to allow in ${this.file}`,
        from: 'ask',
      };
    }
    const byMatrix = MATRIX[this.autonomy][subject.risk];
    const allowed = this.firstMatch('allow', subject);
    if (allowed && !(this.autonomy === 'read_only' && subject.risk !== 'low')) {
      return { verdict: 'allow', reason: `${name} is allowed by ${this.where(allowed.line)} (\`${allowed.pattern.source}\`)`, from: 'allow' };
    }
    const autonomySource = this.autonomyLine
      ? this.where(this.autonomyLine)
      : this.fileExists
        ? `the default; ${this.file} does not set autonomy`
        : `the default; there is no ${this.file}`;
    const reason = `${name} is ${subject.risk} risk and autonomy is ${this.autonomy} (${autonomySource})`;
    if (byMatrix === 'allow') return { verdict: 'allow', reason, from: 'autonomy' };
    if (this.autonomy === 'read_only') {
      return { verdict: 'deny', reason, remedy: `set autonomy: supervised or full in ${this.file}`, from: 'autonomy' };
    }
    return {
      verdict: byMatrix,
      reason,
      remedy: `add \`${name}\` under allow: in ${this.file}${this.allowLine ? ` (the allow list is at line ${this.allowLine})` : this.fileExists ? '' : ' (create the file)'}`,
      from: 'autonomy',
    };
  }
}

/**
 * A bare `(glob)` needs the tool's subject argument. A tool without one (a third-party tool)
 * matches restrictive rules (deny, ask) anyway and never matches an allow: unknown fails closed.
 */
function ruleMatches(pattern: ToolPattern, subject: CallSubject, restrictive: boolean): boolean {
  if (!pattern.matchesName(subject.qualifiedName)) return false;
  const argument = pattern.argument;
  if (!argument) return true;
  if (argument.key === ANY_ARGUMENT) return anyArgumentMatches(argument, subject.args, restrictive);
  const key = argument.key ?? subject.subjectArg;
  if (!key) return restrictive;
  const value = subject.args[key];
  return value !== undefined && valueMatches(argument, key, value, restrictive);
}

/**
 * One argument's value. An array matches a restrictive rule when any item does and an allow when
 * every item does; a number or boolean is compared as its text; what a glob cannot read (an
 * object, null) matches a restrictive rule and never an allow.
 */
function valueMatches(argument: ArgumentMatcher, key: string, value: unknown, restrictive: boolean): boolean {
  if (typeof value === 'string') return textMatches(argument, key, value, restrictive);
  if (typeof value === 'number' || typeof value === 'boolean') return argument.matches(String(value));
  if (Array.isArray(value)) {
    return restrictive ? value.some((item) => valueMatches(argument, key, item, true)) : value.length > 0 && value.every((item) => valueMatches(argument, key, item, false));
  }
  return restrictive;
}

/**
 * A path (by its argument's name, or a `file:` URL) is compared as a server would take it: an
 * allow by its canonical form only, so `src/../.env` is not under `src/*`; a restrictive rule by
 * every form it could take, so `./.env`, `a/../.env` and `file:///p/%2Eenv` are all `.env`.
 */
function textMatches(argument: ArgumentMatcher, key: string, value: string, restrictive: boolean): boolean {
  if (!isPathValue(value, isPathLikeName(key))) return argument.matches(value);
  if (!restrictive) return argument.matches(canonicalPathValue(value));
  return argument.matches(value) || pathValueForms(value).some(argument.matches);
}

/**
 * `(*=glob)`: the string values anywhere in the arguments, each under the name it sits under. A
 * restrictive rule matches when any does; an allow when there is one and every one does.
 */
function anyArgumentMatches(argument: ArgumentMatcher, args: Readonly<Record<string, unknown>>, restrictive: boolean): boolean {
  const strings: { key: string; value: string }[] = [];
  const collect = (value: unknown, key: string) => {
    if (typeof value === 'string') strings.push({ key, value });
    else if (Array.isArray(value)) for (const item of value) collect(item, key);
    else if (value !== null && typeof value === 'object') for (const [inner, item] of Object.entries(value)) collect(item, inner);
  };
  for (const [key, value] of Object.entries(args)) collect(value, key);
  if (restrictive) return strings.some(({ key, value }) => textMatches(argument, key, value, true));
  return strings.length > 0 && strings.every(({ key, value }) => textMatches(argument, key, value, false));
}
