import { basename } from 'node:path';
import type { Node, Parser } from 'web-tree-sitter';
import { gitVerdict } from './git.js';
import { hiddenCode, testEvaluation } from './hidden-code.js';
import { loadBashParser } from './parser.js';
import { networkDevice, Roots } from './paths.js';
import { projectVerdict } from './project-commands.js';
import { readOnlyVerdict, sedCall } from './read-only-commands.js';
import { allows, denyMatch, matchesPrefix, readRule, type CommandRule } from './rules.js';
import { high, maxTier, type Classification, type ParsedCommand, type Tier, type Verdict, type Word } from './types.js';
import { readWord, SUBSTITUTIONS, visitSubstitutionsWithin } from './words.js';
import { commandStringOf, envCall, executedBy, INTERPRETERS, KNOWN_HIGH, launchedCommands, LAUNCHERS, RUNS_OTHERS, SHELLS, unwrap, watchedCommand, withXargsPlaceholder, WRAPPERS, type WrapperSpec } from './wrappers.js';
import { writesInsideRoots, writeVerdict } from './write-commands.js';

export type { Classification, ParsedCommand, Tier, Word } from './types.js';

export interface ClassifierOptions {
  /** The folders commands may write to. */
  readonly roots: readonly string[];
  /** Policy patterns of further project commands (medium), matched as a prefix. */
  readonly projectCommands?: readonly string[];
  readonly allowCommands: readonly string[];
  readonly denyCommands: readonly string[];
}

interface Settings {
  readonly parser: Parser;
  readonly roots: Roots;
  readonly allow: readonly CommandRule[];
  readonly deny: readonly CommandRule[];
  readonly project: readonly CommandRule[];
}

/** Sorts command lines into the permission gate's risk tiers by reading them with the bash grammar. */
export class CommandClassifier {
  private constructor(private readonly settings: Settings) {}

  /** Throws when a policy rule is not a plain command pattern. */
  static async load(options: ClassifierOptions): Promise<CommandClassifier> {
    const parser = await loadBashParser();
    const rules = (texts: readonly string[] = []) => texts.map((text) => readRule(parser, text));
    return new CommandClassifier({
      parser,
      roots: new Roots(options.roots),
      allow: rules(options.allowCommands),
      deny: rules(options.denyCommands),
      project: rules(options.projectCommands),
    });
  }

  /** `cwd` is absolute and already confined to the roots. */
  classify(command: string, cwd: string): Classification {
    return new LineWalk(this.settings).classify(command, cwd);
  }
}

/** Where a part of the line runs: `cd` changes it for what follows in the same shell. */
interface Scope {
  cwd: string | null;
}

const REDIRECTS = new Set(['file_redirect', 'herestring_redirect', 'heredoc_redirect']);
/** Nested command lines (bash -c "eval '…'") are read this deep; deeper ones may be anything. */
const MAX_DEPTH = 4;
/** timeout 5 nice command ls is three; thousands would make every level copy the rest of the line. */
const MAX_WRAPPERS = 8;
const SHOWN_CHARS = 60;

/** One classification: walks the syntax tree, noting reasons and every command the line runs. */
class LineWalk {
  private readonly reasons: string[] = [];
  private readonly commands: ParsedCommand[] = [];
  private readOnly = true;
  private depth = 0;
  private wrappers = 0;

  constructor(private readonly settings: Settings) {}

  classify(command: string, cwd: string): Classification {
    let tier: Tier = 'low';
    // A trailing newline changes nothing; a carriage return becomes part of a word or hides text on a terminal.
    let line = command;
    while (line.endsWith('\n')) line = line.slice(0, -1);
    if (line.trim() === '') tier = this.note(high('empty command'));
    if (line.includes('\0')) tier = this.note(high('NUL byte in the command: bash would cut the line there'));
    if (line.includes('\r')) tier = this.note(high('carriage return in the command: it can hide text on a terminal'));
    if (line.includes('\n')) tier = this.note(high('newline in the command: every line runs as its own command'));
    try {
      tier = maxTier(tier, this.line(line, { cwd }));
    } catch (error) {
      // Thousands of nested wrappers or subshells exhaust the stack: such a line is no one's everyday command.
      if (!(error instanceof RangeError)) throw error;
      tier = this.unreadable(line, 'nested too deeply to read');
    }
    const denial = this.denyingRule();
    const denied = denial?.rule;
    if (denial !== undefined) {
      this.reasons.push(denial.certain ? `matches deny_commands rule "${denial.rule}"` : `may run what deny_commands rule "${denial.rule}" forbids: part of it is only known when it runs`);
    }
    return {
      tier,
      readOnly: this.readOnly && tier !== 'high',
      reasons: this.reasons,
      commands: this.commands,
      ...(denial === undefined ? {} : { denied, deniedCertainly: denial.certain }),
    };
  }

  private line(text: string, scope: Scope): Tier {
    const tree = this.settings.parser.parse(text);
    if (tree === null) return this.unreadable(text, 'the parser gave up');
    try {
      const root = tree.rootNode;
      let tier = this.statement(root, scope);
      const hidden = hiddenCode(root, text);
      if (hidden !== undefined) tier = this.unreadable(text, hidden);
      if (!root.hasError) return tier;
      const error = firstError(root);
      const where = error === undefined ? '' : error.isMissing ? `: a ${error.type} is missing at column ${error.startIndex + 1}` : ` near \`${shown(error.text)}\``;
      return this.unreadable(text, `the parser could not fully read it${where}`);
    } finally {
      tree.delete();
    }
  }

  /** What cannot be read may be anything: high, and a match for every deny rule. */
  private unreadable(text: string, why: string): Tier {
    this.runsUnknown(text);
    return this.note(high(`${why}: \`${shown(text)}\``));
  }

  /** A command nobody can see yet: it meets every deny rule as a possible match. */
  private runsUnknown(text: string): void {
    this.commands.push({ words: [{ kind: 'expansion', text, staticPrefix: '', several: true }], argumentsFromInput: false });
  }

  private statement(node: Node, scope: Scope): Tier {
    switch (node.type) {
      case 'program':
      case 'list':
      case 'compound_statement':
        return this.sequence(node, scope);
      case 'subshell':
        return this.sequence(node, { ...scope });
      case 'pipeline':
        return this.pipeline(node, scope);
      case 'redirected_statement':
        return this.redirected(node, scope);
      case 'command':
        return this.simpleCommand(node, scope);
      case 'negated_command':
        return this.children(node, scope);
      case 'test_command':
        return this.testCommand(node, scope);
      case 'comment':
        return 'low';
      case 'variable_assignment':
      case 'variable_assignments':
        this.commandsWithin(node, scope);
        return this.note(high(`variable assignment \`${shown(node.text)}\`: it can change how later commands run (PATH, IFS…)`));
      case 'declaration_command':
      case 'unset_command':
        this.commandsWithin(node, scope);
        return this.note(high(`\`${shown(node.text)}\` changes shell variables`));
      case 'ERROR':
        this.commandsWithin(node, scope);
        return 'high';
      default:
        this.commandsWithin(node, scope);
        return this.note(high(`${node.type.replaceAll('_', ' ')} is not classified: run its commands one by one`));
    }
  }

  /** Statements, one after the other (`;`, `&&`, `||`, newlines): each must be low to chain. */
  private sequence(node: Node, scope: Scope): Tier {
    let tier: Tier = 'low';
    let statements = 0;
    let chained: Node | undefined;
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (child.type === '&') tier = this.note(high('backgrounding with `&`: the command would outlive the call'));
      if (!child.isNamed || child.type === 'comment') continue;
      statements++;
      const childTier = this.statement(child, scope);
      if (childTier !== 'low') chained ??= child;
      tier = maxTier(tier, childTier);
    }
    if (statements > 1 && tier === 'medium' && chained !== undefined) {
      return this.note(high(`a list (;, &&, ||, newline) chains \`${shown(chained.text)}\`, which is not low: only low commands may be chained`));
    }
    return tier;
  }

  /** Each stage runs in its own subshell; the pipeline is as risky as its riskiest stage. */
  private pipeline(node: Node, scope: Scope): Tier {
    let tier: Tier = 'low';
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (child.isNamed) tier = maxTier(tier, this.statement(child, { ...scope }));
    }
    return tier;
  }

  /** Functions, loops, conditionals, assignments: already high, but their commands still meet the deny rules. */
  private commandsWithin(node: Node, scope: Scope): void {
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (child.type === 'command') this.simpleCommand(child, scope);
      else if (SUBSTITUTIONS.has(child.type)) this.substitution(child, scope);
      else this.commandsWithin(child, scope);
    }
  }

  private children(node: Node, scope: Scope): Tier {
    let tier: Tier = 'low';
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (child.isNamed) tier = maxTier(tier, this.statement(child, scope));
    }
    return tier;
  }

  private redirected(node: Node, scope: Scope): Tier {
    const body = node.childForFieldName('body');
    let tier = body === null ? 'low' : this.statement(body, scope);
    const target = body?.type === 'command' ? body.childForFieldName('name')?.text : undefined;
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (REDIRECTS.has(child.type)) tier = maxTier(tier, this.redirect(child, scope, target));
    }
    return tier;
  }

  private simpleCommand(node: Node, scope: Scope): Tier {
    let tier: Tier = 'low';
    const words: Word[] = [];
    const redirects: Node[] = [];
    const visit = (substitution: Node) => {
      tier = maxTier(tier, this.substitution(substitution, scope));
    };
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (child.type === 'variable_assignment') {
        visitSubstitutionsWithin(child, visit);
        tier = this.note(high(`environment assignment prefix \`${shown(child.text)}\`: it can change what the command runs (PATH, LD_PRELOAD…)`));
      } else if (REDIRECTS.has(child.type)) redirects.push(child);
      else if (child.type === 'command_name') words.push(readWord(child.namedChild(0) ?? child, visit));
      else if (child.isNamed) words.push(readWord(child, visit));
      else tier = this.note(high(`\`${child.text}\` in \`${shown(node.text)}\` is not read by this check`));
    }
    if (words.length > 0) tier = maxTier(tier, this.runs({ words, argumentsFromInput: false }, scope));
    const name = words[0]?.kind === 'static' ? words[0].text : undefined;
    for (const redirect of redirects) tier = maxTier(tier, this.redirect(redirect, scope, name));
    return tier;
  }

  /** $(…), `…`, <(…) and $((…)): high, and what they run meets the deny rules. */
  private substitution(node: Node, scope: Scope): Tier {
    if (node.type === 'arithmetic_expansion') {
      visitSubstitutionsWithin(node, (inner) => this.substitution(inner, scope));
      return this.note(high(`arithmetic expansion \`${shown(node.text)}\`: it can assign variables`));
    }
    this.children(node, { ...scope });
    const kind = node.type === 'process_substitution' ? 'process substitution <(…)' : node.child(0)?.type === '`' ? 'command substitution `…`' : 'command substitution $(…)';
    return this.note(high(`${kind}: \`${shown(node.text)}\` runs before anyone sees its result`));
  }

  private testCommand(node: Node, scope: Scope): Tier {
    let tier: Tier = 'low';
    visitSubstitutionsWithin(node, (substitution) => {
      tier = maxTier(tier, this.substitution(substitution, scope));
    });
    return tier === 'low' ? this.note({ tier: 'low', readOnly: true, reason: 'a test only compares' }) : tier;
  }

  private redirect(node: Node, scope: Scope, target: string | undefined): Tier {
    let tier: Tier = 'low';
    const visit = (substitution: Node) => {
      tier = maxTier(tier, this.substitution(substitution, scope));
    };
    if (node.type === 'herestring_redirect') visitSubstitutionsWithin(node, visit);
    if (node.type === 'heredoc_redirect') {
      const rest = this.heredoc(node, scope, target, visit);
      tier = maxTier(tier, rest);
    }
    if (node.type !== 'file_redirect') {
      const kind = node.type === 'herestring_redirect' ? 'here-string' : 'heredoc';
      if (target !== undefined && INTERPRETERS.has(target)) return this.note(high(`a ${kind} feeds ${target}, which runs it as code`));
      return tier;
    }
    let operator = '';
    let destination: Node | undefined;
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (!child.isNamed) operator = child.type;
      else if (child.type !== 'file_descriptor') destination = child;
    }
    const word = destination === undefined ? undefined : readWord(destination, visit);
    if (word !== undefined && networkDevice(word)) return this.note(high(`\`${shown(word.text)}\`: network through bash's /dev/tcp or /dev/udp`));
    const duplicatesDescriptor = (operator === '>&' || operator === '<&') && (destination?.type === 'number' || word?.text === '-');
    if (operator === '<' || operator === '<&-' || operator === '>&-' || duplicatesDescriptor || word === undefined) return tier;
    // A glob may match a symbolic link to anywhere: its folder says nothing about where the write lands.
    if (word.kind === 'glob') return this.note(high(`redirect target: \`${shown(word.text)}\` is a glob and may match a symbolic link out of the roots`));
    const place = this.settings.roots.place(word, scope.cwd);
    if (place.where === 'harmless') return tier;
    this.readOnly = false;
    if (place.where === 'unknown') return this.note(high(`redirect target: ${place.why}`));
    if (place.where === 'outside') return this.note(high(`redirect to ${place.path} outside the roots`));
    if (place.where === 'inside' && place.gitFolder) return this.note(high(`redirect writes ${place.path}: writes inside .git: hooks and config run programs later`));
    return maxTier(tier, this.note({ tier: 'medium', readOnly: false, reason: `redirect writes ${place.path} inside the roots` }));
  }

  /** `cat <<EOF > out | wc`: the grammar hangs the rest of the line on the heredoc. */
  private heredoc(node: Node, scope: Scope, target: string | undefined, visit: (substitution: Node) => void): Tier {
    let tier: Tier = 'low';
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index) as Node;
      if (child.type === 'heredoc_body') visitSubstitutionsWithin(child, visit);
      else if (REDIRECTS.has(child.type)) tier = maxTier(tier, this.redirect(child, scope, target));
      else if (child.isNamed && !child.type.startsWith('heredoc_') && child.type !== 'file_descriptor') tier = maxTier(tier, this.statement(child, scope));
    }
    return tier;
  }

  /** One command the line runs, through its wrappers down to the program. */
  private runs(command: ParsedCommand, scope: Scope): Tier {
    this.commands.push(command);
    const [nameWord, ...args] = command.words;
    if (nameWord === undefined) return 'low';
    if (nameWord.kind !== 'static') return this.note(high(`the command name \`${nameWord.text}\` is only known when it runs`));
    if (nameWord.text === '') return this.note(high('empty command name'));
    const allowedBy = this.settings.allow.find((rule) => allows(rule, command));
    if (allowedBy !== undefined) return this.note({ tier: 'low', readOnly: false, reason: `${nameWord.text} is allowed by allow_commands rule "${allowedBy.text}"` });
    return this.program(nameWord.text, args, command.argumentsFromInput, scope);
  }

  private program(name: string, args: readonly Word[], argumentsFromInput: boolean, scope: Scope): Tier {
    const texts = [name, ...args.map((word) => (word.kind === 'static' ? word.text : undefined))];
    if (name.includes('/')) {
      const project = projectVerdict(texts);
      if (project !== undefined) return this.verdict(project);
      // /usr/bin/env rm -rf /: what the program runs in turn still meets the deny rules.
      this.program(basename(name), args, argumentsFromInput, scope);
      return this.note(high(`${name} runs a program by its path`));
    }
    const place = (word: Word) => this.settings.roots.place(word, scope.cwd);
    const wrapper = WRAPPERS[name];
    if (wrapper !== undefined) return this.wrapped(name, wrapper, args, argumentsFromInput, scope);
    if (SHELLS.has(name) || name === 'eval' || name === 'su' || name === 'watch') this.nestedLine(name, args, scope);
    if (LAUNCHERS.has(name)) {
      this.follow(launchedCommands(args), scope, 'first');
      this.commandLines(args, scope);
    }
    // `script` without -c runs a shell that reads its commands from the input.
    if (name === 'script' && !args.some((word) => word.kind === 'static' && /^-[a-zA-Z]*c|^--command/.test(word.text))) this.runsUnknown('script reading its standard input');
    // `… | xargs sudo`: the input may hold the whole command.
    if (LAUNCHERS.has(name) && argumentsFromInput) this.runsUnknown(`${name} with arguments from its input`);
    const knownHigh = KNOWN_HIGH.get(name);
    if (knownHigh !== undefined) return this.note(high(knownHigh));
    if (SHELLS.has(name)) return this.note(high(`${name} runs a script or a second command line (-c)`));
    if (name === 'eval') return this.note(high('eval runs its arguments as a command line'));
    if (name === 'cd') return this.cd(args, scope);
    if (name === 'git') return this.verdict(gitVerdict(args, argumentsFromInput, place));
    if (name === 'sed') {
      const call = sedCall(args, argumentsFromInput);
      if (call.problem !== undefined) return this.note(high(`sed: ${call.problem}`));
      if (call.inPlaceFiles !== undefined) return this.verdict(writesInsideRoots('sed -i', call.inPlaceFiles, false, place));
      return this.note({ tier: 'low', readOnly: true, reason: 'sed only prints' });
    }
    if (name === 'find' || name === 'fd') this.follow(executedBy(name, args), scope, 'all');
    if (name === 'test' || name === '[') {
      const evaluated = testEvaluation(args);
      if (evaluated !== undefined) return this.unreadable([name, ...args.map((word) => word.text)].join(' '), evaluated);
    }
    const verdict =
      readOnlyVerdict(name, args, argumentsFromInput) ??
      writeVerdict(name, args, argumentsFromInput, place) ??
      projectVerdict(texts) ??
      this.policyProjectCommand(name, args, argumentsFromInput);
    if (verdict !== undefined) return this.verdict(verdict);
    return this.note(high(`${name} is not a known read-only, project or file-writing command`));
  }

  private wrapped(name: string, wrapper: WrapperSpec, args: readonly Word[], argumentsFromInput: boolean, scope: Scope): Tier {
    const first = args[0];
    if (argumentsFromInput && first === undefined) return this.commandFromInput(name);
    if (name === 'env') return this.env(args, argumentsFromInput, scope);
    if (name === 'command' && first?.kind === 'static' && (first.text === '-v' || first.text === '-V')) {
      return this.note({ tier: 'low', readOnly: true, reason: 'command -v only looks a name up' });
    }
    if (name === 'exec' && first === undefined) return this.note(high('exec without a command redirects the shell itself: every later command reads or writes there'));
    const unwrapped = unwrap(name, wrapper, args);
    if ('problem' in unwrapped) {
      this.follow(launchedCommands(args), scope, 'first');
      return this.note(high(unwrapped.problem));
    }
    if (unwrapped.inner.length === 0 && argumentsFromInput) return this.commandFromInput(name);
    let inner = unwrapped.inner;
    // xargs without a command runs echo.
    if (name === 'xargs') inner = inner.length === 0 ? [{ kind: 'static', text: 'echo' }] : withXargsPlaceholder(args, inner);
    if (inner.length === 0) return this.note({ tier: 'low', readOnly: true, reason: `${name} without a command` });
    if (this.wrappers >= MAX_WRAPPERS) return this.unreadable(inner.map((word) => word.text).join(' '), `more than ${MAX_WRAPPERS} wrappers deep`);
    this.wrappers++;
    const tier = this.runs({ words: inner, argumentsFromInput: argumentsFromInput || name === 'xargs' }, scope);
    this.wrappers--;
    return tier;
  }

  /** env's options, -S strings split into words, NAME=VALUE, then the command, as GNU env reads them. */
  private env(args: readonly Word[], argumentsFromInput: boolean, scope: Scope): Tier {
    const call = envCall(args);
    if ('problem' in call) {
      this.follow(launchedCommands(args), scope, 'first');
      this.commandLines(args, scope);
      return this.note(high(`env: ${call.problem}`));
    }
    const change = call.changes[0];
    if (call.inner.length === 0) {
      if (argumentsFromInput) return this.commandFromInput('env');
      return this.note({ tier: 'low', readOnly: true, reason: 'env without a command prints the environment' });
    }
    if (this.wrappers >= MAX_WRAPPERS) return this.unreadable(call.inner.map((word) => word.text).join(' '), `more than ${MAX_WRAPPERS} wrappers deep`);
    this.wrappers++;
    let tier = this.runs({ words: call.inner, argumentsFromInput }, scope);
    this.wrappers--;
    if (change !== undefined) tier = maxTier(tier, this.note(high(`env ${change}: changes the environment of the command`)));
    return tier;
  }

  /**
   * `flock f -c 'rm -rf x'`, `script -c '…'`, `parallel 'rm {}' ::: x`: a word of a launcher that
   * holds blanks or operators may be a command line it runs; read it for the deny rules.
   */
  private commandLines(args: readonly Word[], scope: Scope): void {
    for (const word of args) {
      if (word.kind !== 'static' || !/[\s;&|]/.test(word.text)) continue;
      if (this.depth >= MAX_DEPTH) {
        this.runsUnknown(word.text);
        continue;
      }
      this.depth++;
      this.line(word.text.replaceAll('\n', ' ; '), { ...scope });
      this.depth--;
    }
  }

  /** `… | xargs env`, `xargs nice`: the words xargs reads become the command. */
  private commandFromInput(name: string): Tier {
    this.runsUnknown(`${name} with its command from xargs's input`);
    return this.note(high(`${name} gets its command from xargs's input: it may run anything`));
  }

  private cd(args: readonly Word[], scope: Scope): Tier {
    // `cd -` goes back to $OLDPWD, which this check does not follow.
    const target = args.length === 1 && args[0] !== undefined && args[0].text !== '-' ? this.settings.roots.directory(args[0], scope.cwd) : null;
    scope.cwd = target;
    return this.note({ tier: 'low', readOnly: true, reason: 'cd only changes the directory' });
  }

  /** bash -c, eval, su -c, watch: the command line they run meets the deny rules too. */
  private nestedLine(name: string, args: readonly Word[], scope: Scope): void {
    const line = name === 'eval' ? args : name === 'watch' ? watchedCommand(args) : commandStringOf(args);
    // `… | bash` and `bash < file` run command lines nobody sees here.
    const readsStandardInput = SHELLS.has(name) && args.every((word) => word.kind === 'static' && word.text.startsWith('-'));
    if (line.length === 0 && !readsStandardInput) return;
    const joined = line.map((word) => word.text).join(' ');
    if (line.length === 0 || line.some((word) => word.kind !== 'static') || this.depth >= MAX_DEPTH) {
      const unseen = line.length === 0 ? `${name} reading its standard input` : joined;
      this.runsUnknown(unseen);
      return;
    }
    this.depth++;
    this.line(joined, { ...scope });
    this.depth--;
  }

  private policyProjectCommand(name: string, args: readonly Word[], argumentsFromInput: boolean): Verdict | undefined {
    const command = { words: [{ kind: 'static' as const, text: name }, ...args], argumentsFromInput };
    const rule = this.settings.project.find((candidate) => matchesPrefix(candidate, command));
    return rule === undefined ? undefined : { tier: 'medium', readOnly: false, reason: `${name} is a project command (project_commands "${rule.text}")` };
  }

  /**
   * Commands run in turn meet the deny rules; those that run others again (sudo sh -c …,
   * find -exec bash -c …) are followed too: every one of find's, the first of a launcher's suffixes.
   */
  private follow(commands: readonly ParsedCommand[], scope: Scope, which: 'all' | 'first'): void {
    let followed = false;
    for (const command of commands) {
      const name = command.words[0];
      const runsOthers = name?.kind === 'static' && RUNS_OTHERS.has(basename(name.text));
      if (!runsOthers || (followed && which === 'first')) this.commands.push(command);
      else if (this.depth >= MAX_DEPTH) this.runsUnknown(name.text);
      else {
        followed = true;
        this.depth++;
        this.runs(command, scope);
        this.depth--;
      }
    }
  }

  private verdict(verdict: Verdict): Tier {
    if (verdict.alsoRuns !== undefined) this.commands.push(...verdict.alsoRuns);
    return this.note(verdict);
  }

  private note(verdict: Verdict): Tier {
    this.reasons.push(verdict.reason);
    if (!verdict.readOnly) this.readOnly = false;
    return verdict.tier;
  }

  /** The first deny rule a command certainly matches, else the first one a command may match. */
  private denyingRule(): { rule: string; certain: boolean } | undefined {
    let possible: string | undefined;
    for (const command of this.commands) {
      for (const rule of this.settings.deny) {
        const match = denyMatch(rule, command);
        if (match === 'certain') return { rule: rule.text, certain: true };
        if (match === 'possible') possible ??= rule.text;
      }
    }
    return possible === undefined ? undefined : { rule: possible, certain: false };
  }
}

function firstError(node: Node): Node | undefined {
  if (node.type === 'ERROR' || node.isMissing) return node;
  for (let index = 0; index < node.childCount; index++) {
    const child = node.child(index) as Node;
    if (child.hasError || child.isMissing) return firstError(child) ?? child;
  }
  return undefined;
}

function shown(text: string): string {
  const flat = text.replaceAll('\n', '⏎').replaceAll('\r', '␍');
  return flat.length > SHOWN_CHARS ? `${flat.slice(0, SHOWN_CHARS - 1)}…` : flat;
}
