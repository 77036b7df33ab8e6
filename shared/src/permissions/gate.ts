import { loadYamlFile } from '../config/yaml-file.js';
import { parseToolPattern, type ToolPattern } from '../names.js';
import { permissionsSchema, PERMISSIONS_FILE, type Autonomy, type Risk } from './schema.js';

type ListName = 'allow' | 'ask' | 'deny' | 'always_ask';

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
    return new PermissionGate(loaded.file, loaded.exists, loaded.value.autonomy, rules, lineIfSet('autonomy'), lineIfSet('allow'));
  }

  /**
   * The same rules under an autonomy no higher than `ceiling` (a profile's), so a profile can
   * narrow the policy and never widen it.
   */
  narrowedTo(ceiling: Autonomy): PermissionGate {
    const order: readonly Autonomy[] = ['read_only', 'supervised', 'full'];
    const autonomy = order.indexOf(ceiling) < order.indexOf(this.autonomy) ? ceiling : this.autonomy;
    return new PermissionGate(this.file, this.fileExists, autonomy, this.rules, this.autonomyLine, this.allowLine);
  }

  private where(line: number | undefined): string {
    return line ? `${this.file} line ${line}` : this.file;
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
      };
    }
    const alwaysAsk = this.firstMatch('always_ask', subject);
    if (alwaysAsk) {
      return {
        verdict: 'ask',
        reason: `${name} must be confirmed: ${this.where(alwaysAsk.line)} lists it under always_ask (\`${alwaysAsk.pattern.source}\`)`,
        remedy: `remove that always_ask entry and add \`${name}\` under allow: in ${this.file}`,
      };
    }
    const ask = this.firstMatch('ask', subject);
    if (ask) {
      return {
        verdict: 'ask',
        reason: `${name} must be confirmed: ${this.where(ask.line)} lists it under ask (\`${ask.pattern.source}\`)`,
        remedy: `move it from ask to allow in ${this.file}`,
      };
    }
    const byMatrix = MATRIX[this.autonomy][subject.risk];
    const allowed = this.firstMatch('allow', subject);
    if (allowed && !(this.autonomy === 'read_only' && subject.risk !== 'low')) {
      return { verdict: 'allow', reason: `${name} is allowed by ${this.where(allowed.line)} (\`${allowed.pattern.source}\`)` };
    }
    const autonomySource = this.autonomyLine
      ? this.where(this.autonomyLine)
      : this.fileExists
        ? `the default; ${this.file} does not set autonomy`
        : `the default; there is no ${this.file}`;
    const reason = `${name} is ${subject.risk} risk and autonomy is ${this.autonomy} (${autonomySource})`;
    if (byMatrix === 'allow') return { verdict: 'allow', reason };
    if (this.autonomy === 'read_only') {
      return { verdict: 'deny', reason, remedy: `set autonomy: supervised or full in ${this.file}` };
    }
    return {
      verdict: byMatrix,
      reason,
      remedy: `add \`${name}\` under allow: in ${this.file}${this.allowLine ? ` (the allow list is at line ${this.allowLine})` : this.fileExists ? '' : ' (create the file)'}`,
    };
  }
}

/**
 * A bare `(glob)` needs the tool's subject argument. A tool without one (a third-party tool)
 * matches restrictive rules (deny, ask) anyway and never matches an allow: unknown fails closed.
 */
function ruleMatches(pattern: ToolPattern, subject: CallSubject, restrictive: boolean): boolean {
  if (!pattern.matchesName(subject.qualifiedName)) return false;
  if (!pattern.argument) return true;
  const key = pattern.argument.key ?? subject.subjectArg;
  if (!key) return restrictive;
  const value = subject.args[key];
  if (typeof value !== 'string') return false;
  return pattern.argument.matches(value);
}
