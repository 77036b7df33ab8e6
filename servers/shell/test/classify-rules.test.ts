import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandClassifier } from '../src/classify/classify.js';

let root: string;
let classifier: CommandClassifier;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'bulkhead-rules-')));
  classifier = await CommandClassifier.load({
    roots: [root],
    allowCommands: ['npm test', 'npm run lint *', 'docker compose ps'],
    denyCommands: ['rm -rf *', 'git push', 'shutdown'],
    projectCommands: ['just'],
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('deny_commands match parsed commands, wherever they run', () => {
  it.each([
    ['rm -rf /', 'rm -rf *'],
    ['rm -rf build', 'rm -rf *'],
    ['"rm" -rf /', 'rm -rf *'],
    ['\\rm -rf /', 'rm -rf *'],
    ["r''m -rf /", 'rm -rf *'],
    ["'rm' '-rf' /", 'rm -rf *'],
    ['/bin/rm -rf /', 'rm -rf *'],
    ['command rm -rf /', 'rm -rf *'],
    ['env rm -rf /', 'rm -rf *'],
    ['nice -n 1 rm -rf /', 'rm -rf *'],
    ['timeout 5 rm -rf /', 'rm -rf *'],
    ['exec rm -rf /', 'rm -rf *'],
    ['sudo -u root rm -rf /', 'rm -rf *'],
    ['ls | xargs rm -rf', 'rm -rf *'],
    ['find . -exec rm -rf {} \\;', 'rm -rf *'],
    ['$(echo rm) -rf /', 'rm -rf *'],
    ['$CMD -rf /', 'rm -rf *'],
    ['rm $FLAGS /', 'rm -rf *'],
    ['echo $(rm -rf /)', 'rm -rf *'],
    ['cat <(rm -rf /)', 'rm -rf *'],
    ['bash -c "rm -rf /"', 'rm -rf *'],
    ["sh -c 'ls; rm -rf /'", 'rm -rf *'],
    ['eval rm -rf /', 'rm -rf *'],
    ['eval "$X"', 'rm -rf *'],
    ['bash -c "$X"', 'rm -rf *'],
    ['ls && rm -rf x', 'rm -rf *'],
    ['(rm -rf x)', 'rm -rf *'],
    ['f() { rm -rf x; }', 'rm -rf *'],
    ['git push --force', 'git push'],
    ['git -C . push', 'git push'],
    ['git --no-pager push origin', 'git push'],
    ['{rm,-rf,/}', 'rm -rf *'],
    ['X=$(rm -rf /)', 'rm -rf *'],
    ['for f in x; do rm -rf $f; done', 'rm -rf *'],
    ['ls | xargs -I{} rm -rf {}', 'rm -rf *'],
    ['timeout $T ls', 'rm -rf *'],
    ['watch rm -rf x', 'rm -rf *'],
    ['su -c "rm -rf x"', 'rm -rf *'],
    ['sudo shutdown now', 'shutdown'],
    ['/usr/bin/env rm -rf x', 'rm -rf *'],
    ['env FOO=bar rm -rf x', 'rm -rf *'],
    ['env -i rm -rf x', 'rm -rf *'],
    ['nice --weird rm -rf x', 'rm -rf *'],
    ["find . -exec sh -c 'rm -rf x' \\;", 'rm -rf *'],
    ["find . -exec ls \\; -exec bash -c 'rm -rf x' \\;", 'rm -rf *'],
    ["sudo sh -c 'rm -rf x'", 'rm -rf *'],
    ["sudo -u root env -i bash -c 'rm -rf x'", 'rm -rf *'],
    ['/bin/bash -c "rm -rf x"', 'rm -rf *'],
    ['echo "rm -rf /" | bash', 'rm -rf *'],
    ['sh < script.sh', 'rm -rf *'],
  ])('%j is denied by %j', (command, rule) => {
    expect(classifier.classify(command, root).denied).toBe(rule);
  });

  it('says whether the match is certain or only possible', () => {
    expect(classifier.classify('rm -rf x', root).reasons).toContain('matches deny_commands rule "rm -rf *"');
    expect(classifier.classify('$CMD -rf x', root).reasons.at(-1)).toContain('may run what deny_commands rule "rm -rf *" forbids');
  });

  it.each(['rm build/a.o', 'git status', 'echo rm -rf /', 'git commit -m "rm -rf /"', 'grep -r "git push" .', 'ls $DIR', 'bash -c "ls -la"'])('%j is not denied', (command) => {
    expect(classifier.classify(command, root).denied).toBeUndefined();
  });
});

describe('deny_commands see through what the security review found', () => {
  it.each([
    ['echo rm -rf x | xargs env', 'high', "env gets its command from xargs's input", 'rm -rf *'],
    ['echo rm -rf x | xargs xargs', 'high', "xargs gets its command from xargs's input", 'rm -rf *'],
    ['echo rm -rf x | xargs nice', 'high', "nice gets its command from xargs's input", 'rm -rf *'],
    ['echo rm -rf x | xargs sudo', 'high', 'sudo runs a command as another user', 'rm -rf *'],
    ["[[ 'a[$(rm -rf x)]' -eq 1 ]]", 'high', '[[ -eq ]] evaluates', 'rm -rf *'],
    ["echo 'a[$(rm -rf x)]'; echo ${!_}", 'high', 'is an indirect expansion', 'rm -rf *'],
    ['echo "${x:-`rm -rf x`}"', 'high', 'holds a substitution the parser does not show', 'rm -rf *'],
    ['rm -r -f x', 'medium', 'rm writes inside the roots', 'rm -rf *'],
    ['rm -fr x', 'medium', 'rm writes inside the roots', 'rm -rf *'],
    ['rm -Rf x', 'medium', 'rm writes inside the roots', 'rm -rf *'],
    ['rm -f -v -R x', 'medium', 'rm writes inside the roots', 'rm -rf *'],
    ['rm --recursive --force x', 'medium', 'rm writes inside the roots', 'rm -rf *'],
    ['rm --rec --forc x', 'high', 'rm --rec: an option this check does not know', 'rm -rf *'],
    ['git -c x=y push', 'high', 'git -c: a global option', 'git push'],
    ['git --git-dir=.git push origin', 'high', 'git --git-dir=.git: a global option', 'git push'],
    ['git --git-dir .git push', 'high', 'git --git-dir: a global option', 'git push'],
    ['git --work-tree=. -c a=b --no-pager push -f', 'high', 'git --work-tree=.: a global option', 'git push'],
    ['builtin eval rm -rf x', 'high', 'builtin runs a shell builtin by name', 'rm -rf *'],
    ['echo rm | xargs -I{} {} -rf x', 'high', 'the command name `{}` is only known when it runs', 'rm -rf *'],
    ['echo rm | xargs -I % nice % -rf x', 'high', 'nice: `%` may be an option or the command', 'rm -rf *'],
  ] as const)('%j → %s (%s), denied by %j', (command, tier, reason, rule) => {
    const result = classifier.classify(command, root);
    expect(result.tier, result.reasons.join(' | ')).toBe(tier);
    expect(result.reasons.join(' | ')).toContain(reason);
    expect(result.denied).toBe(rule);
  });

  it('compares options as sets, on both the rule and the command', async () => {
    const spelled = await CommandClassifier.load({ roots: [root], allowCommands: [], denyCommands: ['rm --recursive --force *', 'git push --force *', 'cp -f *'] });
    expect(spelled.classify('rm -rf x', root).denied).toBe('rm --recursive --force *');
    expect(spelled.classify('rm -r x', root).denied).toBeUndefined();
    expect(spelled.classify('git push origin -f', root).denied).toBe('git push --force *');
    expect(spelled.classify('git push --force-with-lease origin', root).denied).toBeUndefined();
    expect(spelled.classify('cp --force a b', root).denied).toBe('cp -f *');
    expect(spelled.classify('cp a b', root).denied).toBeUndefined();
  });

  it.each(['rm -r x', 'rm -f x', 'rm -- -rf', 'git -c x=y status', 'git --git-dir=.git log'])('%j is not denied', (command) => {
    expect(classifier.classify(command, root).denied).toBeUndefined();
  });
});

describe('allow_commands make a command low for its own part', () => {
  it.each([
    ['npm test', 'low'],
    ['npm run lint', 'low'],
    ['npm run lint -- --fix', 'low'],
    ['timeout 60 npm test', 'low'],
    ['npm test && npm run lint', 'low'],
    ['docker compose ps', 'low'],
    ['docker compose up', 'high'],
    ['npm test --watch', 'medium'],
    ['npm test > /etc/out', 'high'],
    ['npm test $(id)', 'high'],
    ['FOO=1 npm test', 'high'],
    ['"npm" test', 'low'],
    ['$NPM test', 'high'],
    ['npm "$T"', 'high'],
    ['/tmp/npm test', 'high'],
    ['just build', 'medium'],
  ] as const)('%j → %s', (command, tier) => {
    const result = classifier.classify(command, root);
    expect(result.tier, result.reasons.join(' | ')).toBe(tier);
    if (tier === 'low') expect(result.readOnly).toBe(false);
  });

  it('names the allow rule', () => {
    expect(classifier.classify('npm test', root).reasons).toContain('npm is allowed by allow_commands rule "npm test"');
  });
});

describe('the parsed commands', () => {
  it('lists each command with its words after quote removal, and marks what is known only at run time', () => {
    const { commands } = classifier.classify(`g"it" log -n 5 "$REF" | xargs grep x`, root);
    expect(commands).toEqual([
      {
        words: [
          { kind: 'static', text: 'git' },
          { kind: 'static', text: 'log' },
          { kind: 'static', text: '-n' },
          { kind: 'static', text: '5' },
          { kind: 'expansion', text: '"$REF"', staticPrefix: '', several: false },
        ],
        argumentsFromInput: false,
      },
      expect.objectContaining({ words: [{ kind: 'static', text: 'git' }, ...commands[0]!.words.slice(1)] }),
      { words: [{ kind: 'static', text: 'xargs' }, { kind: 'static', text: 'grep' }, { kind: 'static', text: 'x' }], argumentsFromInput: false },
      { words: [{ kind: 'static', text: 'grep' }, { kind: 'static', text: 'x' }], argumentsFromInput: true },
    ]);
  });
});

describe('policy rules', () => {
  it('refuses a rule that is not one plain command', async () => {
    await expect(CommandClassifier.load({ roots: [root], allowCommands: ['ls; rm'], denyCommands: [] })).rejects.toThrow('is not one plain command');
    await expect(CommandClassifier.load({ roots: [root], allowCommands: [], denyCommands: ['rm $X'] })).rejects.toThrow('is an expansion');
    await expect(CommandClassifier.load({ roots: [root], allowCommands: [], denyCommands: ['echo $(id)'] })).rejects.toThrow('contains a substitution');
  });
});
