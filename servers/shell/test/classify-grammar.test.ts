// The tiers follow each trusted program's own grammar (issue 15, Shell 3): GNU sed 4.9's script
// syntax, GNU env's -S, xxd's and uniq's output operand, wrappers that run a command line, and git
// subcommands that run programs a repository's configuration names.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandClassifier } from '../src/classify/classify.js';
import { sedScriptDanger } from '../src/classify/sed.js';
import { splitEnvString } from '../src/classify/wrappers.js';
import type { Tier } from '../src/classify/types.js';

let root: string;
let classifier: CommandClassifier;
let denying: CommandClassifier;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'bulkhead-classify-grammar-')));
  classifier = await CommandClassifier.load({ roots: [root], allowCommands: [], denyCommands: [] });
  denying = await CommandClassifier.load({ roots: [root], allowCommands: [], denyCommands: ['rm *', 'git push *'] });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function tiers(cases: readonly (readonly [string, Tier, string?])[]) {
  it.each(cases.map(([command, tier, reason]) => [command, tier, reason ?? ''] as const))('%j → %s', (command, tier, reason) => {
    const result = classifier.classify(command, root);
    expect(result.tier, result.reasons.join(' | ')).toBe(tier);
    if (reason !== '') expect(result.reasons.join(' | ')).toContain(reason);
  });
}

describe('sed: GNU sed 4.9 script syntax', () => {
  it.each([
    ':x e touch pwned',
    ':x\te touch pwned',
    ': x e touch pwned',
    ':a s/x/;e touch pwned/',
    'b x e touch pwned',
    't x e id',
    'T x e id',
    'v 4.2 e id',
    '/x/bend e id',
    'e',
    '1e id',
    '$e id',
    '/re/I,+3 e id',
    '0~2 e id',
    '1!e id',
    '1 ! e id',
    '1{bx} e id',
    '1{:a} e id',
    'bx#c\ne id',
    '1,/x/ { e id',
    '{e id\n}',
    'p;e id',
    'p\ne id',
    's/a/b/e',
    's/a/b/ge',
    's/a/b/3e',
    's/a/b/Ie',
    's|a|b|w out',
    's/a/b/gw out',
    's/a\\/b/c/w out',
    's/[/]/x/;e id',
    'y/ab/cd/;e id',
    'w out',
    'W out',
    '1w /dev/stdout',
    'r /etc/passwd',
    'R /etc/passwd',
    '1r x',
    'a foo\ne id',
    'a foo\\\\\ne id',
    'F;e id',
    'z;e id',
    'q;e id',
    'l 5;e id',
    'L',
    'Q 5 e id',
    'x', // a single command x is fine: counted below
  ].filter((script) => script !== 'x'))('%j is not read-only', (script) => {
    expect(sedScriptDanger(script)).toBeDefined();
    expect(classifier.classify(`sed '${script.replaceAll("'", "'\\''")}' f.txt`, root).tier).not.toBe('low');
  });

  it.each([
    'p', '1,20p', '$p', '/x/d', '/x/,/y/d', '0,/x/d', '1~3p', '2,+4p', '3,~4p', '/a/I p', '/a/M!p', '\\,x,p', 's/a/b/', 's/a/b/g3pIiMm',
    's/a\\/b/c/', 's,a,b,', 's/a/\\n/g', 'y/abc/xyz/', ':a;N;$!ba;s/\\n/ /g', ':a\nN\nba', 'b', 'bend;:end', 't', 'T', 'n;d', '=', 'l', 'l 70', 'q', 'q5', 'Q', 'x;G;h;H;g',
    '/x/{p;b}', '$!{N;ba}', ':a;$!{N;ba};s/\\n/ /g', '1{:a}', 'bx#c\n:x', 'a foo', 'a foo\\\ne id', 'i\\\nfoo', 'c\\\nfoo\\\nbar', 'a foo; e touch pwned', '1{p;p}', '/x/{\n  s/a/b/\n  p\n}', '# comment\np', '#n\np', 'p # e id', 'F', 'z', 'v', 'v 4.2', 'D', 'P', 'N',
  ])('%j only prints', (script) => {
    expect(sedScriptDanger(script)).toBeUndefined();
  });

  tiers([
    ["sed ':x e touch pwned' f.txt", 'high', 'followed on its line by more text'],
    ["sed -n 'p' f.txt", 'low'],
    ["sed -e 'a\\' -e 'e touch x' f.txt", 'low'],
    ["sed -e p -e '1e id' f.txt", 'high', 'the `e` command'],
    ["sed --expression=p --expression='w out' f.txt", 'high', 'writes a file'],
    ["sed --expr='s/a/b/e' f.txt", 'high'],
    ['sed -E -s -z -u -b -l 40 --posix --debug --null-data --separate --line-length 40 p f.txt', 'low'],
    ['sed -n p f.txt -i', 'medium', 'sed -i'],
    ['sed -in p f.txt', 'medium', 'sed -i'],
    ['sed --in-place=.bak p f.txt', 'medium'],
    ['sed --in p f.txt', 'medium'],
    ['sed -f script.sed f.txt', 'high', 'from a file'],
    ['sed --file=script.sed f.txt', 'high', 'from a file'],
    ['sed --fi=script.sed f.txt', 'high', 'from a file'],
    ['sed --s p f.txt', 'high', 'does not know'],
    ['sed -e', 'high'],
    ['sed', 'high'],
    ['sed p *', 'high', 'may expand to an option'],
    ['sed -- p *', 'low'],
    ['sed "$S" f.txt', 'high'],
    ['sed --help', 'high'],
  ]);
});

describe('operands: a glob or "$@" is any number of them', () => {
  tiers([
    ['uniq *', 'high', 'several operands'],
    ['uniq -c *.txt', 'high', 'several operands'],
    ['uniq {a,b}', 'high'],
    ['uniq "$@"', 'high'],
    ['uniq $F', 'high'],
    ['uniq in.txt', 'low'],
    ['uniq -f 2 in.txt', 'low'],
    ['uniq -c in.txt out.txt', 'high'],
    ['xxd *', 'high'],
    ['xxd f.bin', 'low'],
    ['xxd -l 64 f.bin', 'low'],
    ['xxd -c 8 -g 1 f.bin', 'low'],
    ['xxd -pc f.bin out', 'high', 'second operand'],
    ['xxd f.bin -p', 'high', 'second operand'],
    ['xxd -r f.hex out', 'high'],
    ['xxd -- f.bin', 'low'],
    ['xxd "$@"', 'high'],
    ['cat *', 'low'],
    ['sort -o out in', 'high'],
    ['awk \'BEGIN { ARGV[1] = "/inet/tcp/0/127.0.0.1/9"; ARGC = 2 } { print }\'', 'high', 'network'],
    ['awk \'{ print }\' "$F"', 'high', '/inet'],
    ['awk \'{ print }\' *.csv', 'low'],
  ]);
});

describe('wrappers are looked through', () => {
  tiers([
    ["env -S 'rm x'", 'medium'],
    ["env -S 'ls -l'", 'low'],
    ["env -S'ls -l' src", 'low'],
    ["env --split-string='ls -l'", 'low'],
    ["env --split='-i rm x'", 'high', 'env -i'],
    ["env -iS 'ls'", 'high', 'env -i'],
    ["env -S 'FOO=1 ls'", 'high', 'env FOO=1'],
    ["env -S 'ls \\c rm x'", 'low'],
    ["env -S 'sed -e\\_1e\\_id f'", 'high', 'the `e` command'],
    ["env -S '${X} y'", 'high'],
    ['env -u HOME ls', 'high', 'env -u'],
    ['env -C /tmp ls', 'high', 'env -C'],
    ['env --chdir=/tmp ls', 'high'],
    ['env -- ls', 'low'],
    ['env - ls', 'high'],
    ['env -v ls', 'low'],
    ['env --debug ls', 'low'],
    ['env --bogus ls', 'high'],
    ['env', 'low'],
    ['env -i', 'low'],
    ['xargs -i echo {}', 'low'],
    ['xargs -I {} cat {}', 'low'],
    ['xargs -p cat', 'low'],
    ['time -o out ls', 'high'],
    ['nice -n 5 ls', 'low'],
    ['timeout -s KILL 5 cat f', 'low'],
    ['stdbuf -oL cat f', 'low'],
    ['busybox ls', 'high', 'applet'],
    ["script -qc 'ls' /dev/null", 'high'],
    ['parallel ls ::: a b', 'high'],
    ['sudo ls', 'high'],
    ['doas ls', 'high'],
    ['watch -n 1 ls', 'high'],
  ]);

  it.each([
    ["env -S 'rm x'", 'rm *'],
    ["env -S'rm x'", 'rm *'],
    ["env -vS 'rm x'", 'rm *'],
    ["env --split-string='rm x'", 'rm *'],
    ["env --split-s 'rm x'", 'rm *'],
    ["env -S '-i -S\"rm x\"'", 'rm *'],
    ["env -S 'A=1 rm\\_x'", 'rm *'],
    ["env -S \"'rm' x\"", 'rm *'],
    ['env -u X -C /tmp -i rm x', 'rm *'],
    ["env --bogus -S 'rm x'", 'rm *'],
    ["flock /tmp/l -c 'rm x'", 'rm *'],
    ['flock /tmp/l rm x', 'rm *'],
    ["script -qc 'rm x' /dev/null", 'rm *'],
    ['busybox rm x', 'rm *'],
    ["busybox sh -c 'rm x'", 'rm *'],
    ["parallel 'rm {}' ::: x", 'rm *'],
    ['parallel rm ::: x', 'rm *'],
    ['watch -n 1 rm x', 'rm *'],
    ["watch 'rm x'", 'rm *'],
    ['nohup rm x', 'rm *'],
    ['setsid rm x', 'rm *'],
    ['chrt 1 rm x', 'rm *'],
    ['ionice -c 3 rm x', 'rm *'],
    ['taskset -c 0 rm x', 'rm *'],
    ['nice -5 rm x', 'rm *'],
    ['timeout -vs KILL 5 rm x', 'rm *'],
    ['stdbuf -o0 rm x', 'rm *'],
    ['time rm x', 'rm *'],
    ['command rm x', 'rm *'],
    ['builtin command rm x', 'rm *'],
    ['exec rm x', 'rm *'],
    ['sudo -u root rm x', 'rm *'],
    ['doas rm x', 'rm *'],
    ["sudo sh -c 'rm x'", 'rm *'],
    ["bash -c 'rm x'", 'rm *'],
    ["sh -ec 'rm x'", 'rm *'],
    ['xargs -I{} rm {}', 'rm *'],
    ["xargs -i sh -c 'rm {}'", 'rm *'],
    ['find . -exec rm {} +', 'rm *'],
    ['find . -execdir rm {} ;', 'rm *'],
    ['find . -ok rm {} ;', 'rm *'],
    ['find . -okdir rm {} ;', 'rm *'],
    ["su -c 'rm x'", 'rm *'],
    ["runuser -u nobody -- sh -c 'rm x'", 'rm *'],
    ['unbuffer rm x', 'rm *'],
    ["env -S 'git push origin'", 'git push *'],
  ])('%j meets deny rule %j', (command, rule) => {
    expect(denying.classify(command, root).denied).toBe(rule);
  });

  it('splits env -S strings as GNU env does', () => {
    const texts = (text: string) => {
      const words = splitEnvString(text);
      return typeof words === 'string' ? words : words.map((word) => word.text);
    };
    expect(texts('a  b\tc')).toEqual(['a', 'b', 'c']);
    expect(texts(`'a b' "c d" e\\_f`)).toEqual(['a b', 'c d', 'e', 'f']);
    expect(texts('"a\\_b"')).toEqual(['a b']);
    expect(texts('a \\c b')).toEqual(['a']);
    expect(texts('a #b c')).toEqual(['a']);
    expect(texts('a#b')).toEqual(['a#b']);
    expect(texts('\'it\\\'s\'')).toEqual(["it's"]);
    expect(texts('"a')).toContain('unterminated');
    expect(texts('\\q')).toContain('escape');
  });
});

describe('git: reads that run programs a repository names are medium', () => {
  tiers([
    ['git status', 'medium', 'textconv'],
    ['git status --short', 'medium'],
    ['git diff', 'medium'],
    ['git diff --cached', 'medium'],
    ['git log --oneline', 'medium'],
    ['git log -p', 'medium'],
    ['git show HEAD', 'medium'],
    ['git blame f', 'medium'],
    ['git annotate f', 'medium'],
    ['git whatchanged', 'medium'],
    ['git diff-tree -p HEAD', 'medium'],
    ['git diff-files -p', 'medium'],
    ['git diff-index -p HEAD', 'medium'],
    ['git cat-file --filters HEAD:f', 'medium'],
    ['git cat-file --batch', 'medium'],
    ['git cat-file --textconv HEAD:f', 'high'],
    ['git describe --dirty', 'medium'],
    ['git stash show', 'medium'],
    ['git stash list -p', 'medium'],
    ['git reflog -p', 'medium'],
    ['git grep -O x', 'high'],
    ['git grep --open-files-in-pager x', 'high'],
    ['git diff --ext-diff', 'high'],
    ['git log --textconv', 'high'],
    ['git cat-file -p HEAD', 'medium'],
    ["git rev-list '--format=%G?' HEAD", 'medium'],
    ['git ls-tree HEAD', 'medium'],
    ['git describe --always', 'medium'],
    ['git shortlog -sn', 'medium'],
    ['git for-each-ref', 'medium'],
    ['git show-ref', 'medium'],
    ['git name-rev HEAD', 'medium'],
    ['git stash list', 'medium'],
    ['git reflog', 'medium'],
    ['git branch -v', 'medium'],
    ['git tag -l -n', 'medium'],
    ['git rev-parse HEAD~1', 'medium'],
    ['git rev-parse HEAD:f.txt', 'medium'],
    ['git rev-parse @{u}', 'medium'],
    ['git ls-files --with-tree=HEAD', 'medium'],
    ['git check-attr --source=HEAD -a f', 'medium'],
    ['git grep foo HEAD', 'medium'],
    ['git grep --cached foo', 'medium'],
    ['git grep -e foo main', 'medium'],
    ['git rev-parse HEAD', 'low'],
    ['git rev-parse --show-toplevel --abbrev-ref HEAD', 'low'],
    ['git ls-files -s', 'low'],
    ['git check-attr -a f', 'low'],
    ['git check-ignore f', 'low'],
    ['git grep foo', 'low'],
    ['git grep -n -e foo -- src', 'low'],
    ['git grep -A 2 foo -- src', 'low'],
    ['git branch -a', 'low'],
    ['git branch', 'low'],
    ['git tag -l', 'low'],
    ['git count-objects -v', 'low'],
    ['git worktree list', 'low'],
    ['git remote -v', 'low'],
    ['git config --list', 'low'],
    ['git version', 'low'],
    ['git stash', 'medium'],
    ['git branch -d x', 'medium'],
    ['git format-patch HEAD~1', 'medium'],
    ['git tag -l -v v1', 'medium'],
    ['git tag -l', 'low'],
  ]);
});
