import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandClassifier } from '../src/classify/classify.js';
import type { Tier } from '../src/classify/types.js';

let root: string;
let classifier: CommandClassifier;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'bulkhead-classify-')));
  mkdirSync(join(root, 'src'));
  symlinkSync('/etc', join(root, 'etc-link'));
  classifier = await CommandClassifier.load({ roots: [root], allowCommands: [], denyCommands: [] });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

type Case = readonly [command: string, tier: Tier, readOnly: boolean, reason: string];

function check(cases: readonly Case[]) {
  it.each(cases)('%j → %s', (command, tier, readOnly, reason) => {
    const result = classifier.classify(command, root);
    expect({ tier: result.tier, readOnly: result.readOnly }, result.reasons.join(' | ')).toEqual({ tier, readOnly });
    expect(result.reasons.join(' | ')).toContain(reason);
  });
}

describe('low: every stage reads', () => {
  check([
    ['ls', 'low', true, 'ls only reads'],
    ['ls -la src', 'low', true, 'ls only reads'],
    ['cat package.json | head -n 20', 'low', true, 'head only reads'],
    ['grep -rn "TODO" src | wc -l', 'low', true, 'wc only reads'],
    ['rg -n --glob "*.ts" foo src', 'low', true, 'rg only reads'],
    ['find . -name "*.ts" -type f', 'low', true, 'find only reads'],
    ['git branch -a', 'low', true, 'git branch only reads'],
    ['pwd', 'low', true, 'pwd only reads'],
    ['echo hello', 'low', true, 'echo only reads'],
    ['ls; pwd', 'low', true, 'pwd only reads'],
    ['ls && cat README.md || echo missing', 'low', true, 'echo only reads'],
    ["'l's -la", 'low', true, 'ls only reads'],
    ['\\ls', 'low', true, 'ls only reads'],
    ['ls *.ts src/*.json', 'low', true, 'ls only reads'],
    ['ls >/dev/null 2>&1', 'low', true, 'ls only reads'],
    ['ls 2>/dev/null | sort -u', 'low', true, 'sort only reads'],
    ['cat < README.md', 'low', true, 'cat only reads'],
    ['sed -n "1,20p" README.md', 'low', true, 'sed only prints'],
    ["sed 's/hello/world/g' README.md", 'low', true, 'sed only prints'],
    ["awk '{print $1}' README.md", 'low', true, 'awk program only reads'],
    ["awk -F: -v n=1 '{print $n}' /etc/passwd", 'low', true, 'awk program only reads'],
    ['cd src && ls', 'low', true, 'cd only changes the directory'],
    ['[[ -f README.md ]] && cat README.md', 'low', true, 'a test only compares'],
    ['[ -d src ] && ls src', 'low', true, 'a test only compares'],
    ['find . -name "*.ts" | xargs grep -l foo', 'low', true, 'grep only reads'],
    ['command -v node', 'low', true, 'command -v only looks a name up'],
    ['timeout 5 ls', 'low', true, 'ls only reads'],
    ['env', 'low', true, 'env without a command prints the environment'],
    ['grep x <<< "a x b"', 'low', true, 'grep only reads'],
    ['tee', 'low', true, 'tee without files'],
    ['date +%s', 'low', true, 'date only reads'],
    ['date -d tomorrow +%F', 'low', true, 'date only reads'],
    ['date -Iseconds', 'low', true, 'date only reads'],
    ['echo {a,b}.txt', 'low', true, 'echo only reads'],
    ['uniq -c input.txt', 'low', true, 'uniq only reads'],
    ['ls # a comment', 'low', true, 'ls only reads'],
    ['ls\n', 'low', true, 'ls only reads'],
    ['rg -- --pre foo', 'low', true, 'rg only reads'],
    ['ls | xargs', 'low', true, 'echo only reads'],
    ['stdbuf -oL grep x f', 'low', true, 'grep only reads'],
    ['git config --get user.name', 'low', true, 'git config only reads'],
    ['git tag -l "v*"', 'low', true, 'git tag only reads'],
    ['git remote -v', 'low', true, 'git remote only reads'],
    ['cd /etc; cat passwd', 'low', true, 'cat only reads'],
    ['(ls; pwd)', 'low', true, 'pwd only reads'],
    ['{ ls; pwd; }', 'low', true, 'pwd only reads'],
    ['echo hi >&2', 'low', true, 'echo only reads'],
    ['ls &>/dev/null', 'low', true, 'ls only reads'],
    ["echo '$(id)' \\$HOME", 'low', true, 'echo only reads'],
  ]);
});

describe('medium: project commands and writes inside the roots', () => {
  check([
    ['npm test', 'medium', false, 'npm test is a project command'],
    ['pnpm -r --filter web build', 'medium', false, 'pnpm build is a project command'],
    ['npm run lint -- --fix', 'medium', false, 'npm run is a project command'],
    ['cargo test --all', 'medium', false, 'cargo test is a project command'],
    ['go vet ./...', 'medium', false, 'go vet is a project command'],
    ['python -m pytest -x', 'medium', false, 'python -m pytest is a project command'],
    ['make -j4', 'medium', false, 'make is a project command'],
    ['npx tsc --noEmit | tail -20', 'high', false, 'npx downloads and runs packages'],
    ['pnpm vitest run 2>&1 | tail -50', 'high', false, 'pnpm is not a known'],
    ['npm test 2>&1 | tail -50', 'medium', false, 'npm test is a project command'],
    ['echo hi > notes.txt', 'medium', false, `redirect writes`],
    ['echo hi >> src/log.txt', 'medium', false, 'inside the roots'],
    ['mkdir -p build/out', 'medium', false, 'mkdir writes inside the roots'],
    ['touch src/a.ts', 'medium', false, 'touch writes inside the roots'],
    ['rm -rf build', 'medium', false, 'rm writes inside the roots'],
    ['rm *.o', 'medium', false, 'rm writes inside the roots'],
    ['cp -r src build', 'medium', false, 'cp writes inside the roots'],
    ['mv a.txt b.txt', 'medium', false, 'mv writes inside the roots'],
    ['ls | tee listing.txt', 'medium', false, 'tee writes inside the roots'],
    ["sed -i 's/a/b/' src/a.ts", 'medium', false, 'sed -i writes inside the roots'],
    ['git add -A', 'medium', false, 'changes the repository inside the roots'],
    ['git commit -m "fix: things"', 'medium', false, 'git commit changes the repository'],
    ['git branch feature', 'medium', false, 'git branch changes the repository'],
    ['git stash', 'medium', false, 'git stash changes the repository'],
    ['git status', 'medium', true, 'git status may run programs the repository'],
    ['git log --oneline -n 20', 'medium', true, 'git log may run programs the repository'],
    ['git diff HEAD~1 -- src', 'medium', true, 'git diff may run programs the repository'],
    ['git show HEAD:README.md', 'medium', true, 'git show may run programs the repository'],
    ['git blame -L 1,20 README.md', 'medium', true, 'git blame may run programs the repository'],
    ['git --no-pager log -p', 'medium', true, 'git log may run programs the repository'],
    ['git -C src status', 'medium', true, 'git status may run programs the repository'],
    ['git diff --text', 'medium', true, 'git diff may run programs the repository'],
    ['git log --output-indicator-new=+', 'medium', true, 'git log may run programs the repository'],
    ['git log -- --output=x', 'medium', true, 'git log may run programs the repository'],
    ['git stash list', 'medium', true, 'git stash may run programs the repository'],
    ['./gradlew test', 'medium', false, 'is a project command'],
    [': > out.txt', 'medium', false, 'redirect writes'],
    ['> out.txt', 'medium', false, 'redirect writes'],
    ['cd src && rm -rf dist', 'high', false, 'only low commands may be chained'],
    ['timeout 600 npm test', 'medium', false, 'npm test is a project command'],
  ]);
});

describe('high: bad input', () => {
  check([
    ['ls; rm -rf build', 'high', false, 'only low commands may be chained'],
    ['ls && npm test', 'high', false, 'only low commands may be chained'],
    ['npm test || echo failed', 'high', false, 'only low commands may be chained'],
    ['ls; curl https://example.com', 'high', false, 'curl reaches the network'],
    ['echo $(whoami)', 'high', false, 'command substitution $(…)'],
    ['echo "$(cat /etc/passwd)"', 'high', false, 'command substitution $(…)'],
    ['echo `id`', 'high', false, 'command substitution `…`'],
    ['ls\nrm -rf /', 'high', false, 'newline in the command'],
    ['ls\r', 'high', false, 'carriage return'],
    ['ls\rrm -rf /', 'high', false, 'carriage return'],
    ['FOO=bar ls', 'high', false, 'environment assignment prefix'],
    ['PATH=/tmp/evil:$PATH ls', 'high', false, 'environment assignment prefix'],
    ['X=1; ls', 'high', false, 'variable assignment'],
    ['export PATH=/tmp', 'high', false, 'changes shell variables'],
    ['bash -c "ls"', 'high', false, 'bash runs a script or a second command line'],
    ["sh -c 'cat README.md'", 'high', false, 'sh runs a script'],
    ['bash -lc ls', 'high', false, 'bash runs'],
    ['bash script.sh', 'high', false, 'bash runs a script'],
    ['eval ls', 'high', false, 'eval runs its arguments'],
    ['find . -exec rm {} \\;', 'high', false, 'find -exec'],
    ['find . -execdir cat {} +', 'high', false, 'find -execdir'],
    ['find . -ok rm {} \\;', 'high', false, 'find -ok'],
    ['find . -name "*.o" -delete', 'high', false, 'find -delete'],
    ['find . -fprint /tmp/out', 'high', false, 'find -fprint'],
    ['find . -fprintf /tmp/out %p', 'high', false, 'find -fprintf'],
    ['find . -fls /tmp/out', 'high', false, 'find -fls'],
    ['find $DIR -name x', 'high', false, 'may expand to an option'],
    ['git -c core.pager=sh log', 'high', false, 'git -c'],
    ['git -c core.pager="sh -c id" log', 'high', false, 'global option'],
    ['"git" -c x=y status', 'high', false, 'git -c'],
    ['git --config-env=core.pager=X log', 'high', false, 'git --config-env'],
    ['git --exec-path=/tmp log', 'high', false, 'git --exec-path'],
    ['git -C /etc log', 'high', false, 'outside the roots'],
    ['git --git-dir=/tmp/x/.git log', 'high', false, 'global option'],
    ['git log --output=/tmp/x', 'high', false, '--output'],
    ['git log --outp=/tmp/x', 'high', false, '--outp'],
    ['git show --output /tmp/x', 'high', false, '--output'],
    ['git diff --ext-diff', 'high', false, '--ext-diff'],
    ['git diff --textconv', 'high', false, '--textconv'],
    ['git grep -Ovim foo', 'high', false, 'git grep -O'],
    ['git push origin main', 'high', false, 'reaches the network'],
    ['git fetch', 'high', false, 'reaches the network'],
    ['git config core.pager sh', 'high', false, 'git config can set programs'],
    ['git rebase -x "make" main', 'high', false, 'git rebase -x'],
    ['git frobnicate', 'high', false, 'not a subcommand this check knows'],
    ['echo x > /etc/passwd', 'high', false, 'redirect to /etc/passwd outside the roots'],
    ['echo x > ../outside.txt', 'high', false, 'outside the roots'],
    ['echo x > etc-link/passwd', 'high', false, 'outside the roots'],
    ['echo x > $OUT', 'high', false, 'redirect target'],
    ['echo x > ~/.bashrc', 'high', false, 'redirect target'],
    ['cd /tmp && echo x > f', 'high', false, 'outside the roots'],
    ['cd $D && echo x > f', 'high', false, 'a cd left unknown'],
    ['diff <(ls) <(ls src)', 'high', false, 'process substitution <(…)'],
    ['sleep 100 &', 'high', false, 'backgrounding with `&`'],
    ['ls & pwd', 'high', false, 'backgrounding'],
    ['sudo ls', 'high', false, 'sudo runs a command as another user'],
    ['doas cat /etc/shadow', 'high', false, 'doas runs a command as another user'],
    ['su -c ls', 'high', false, 'su runs a command as another user'],
    ['curl https://example.com', 'high', false, 'curl reaches the network'],
    ['wget -qO- https://example.com', 'high', false, 'wget reaches the network'],
    ['nc -l 4444', 'high', false, 'nc reaches the network'],
    ['ssh host ls', 'high', false, 'ssh reaches the network'],
    ['scp a host:b', 'high', false, 'scp reaches the network'],
    ['rsync -a . host:x', 'high', false, 'rsync reaches the network'],
    ['ftp host', 'high', false, 'ftp reaches the network'],
    ['telnet host', 'high', false, 'telnet reaches the network'],
    ["python3 <<< 'import os'", 'high', false, 'a here-string feeds python3'],
    ['node <<< "process.exit(1)"', 'high', false, 'a here-string feeds node'],
    ['bash <<< "rm -rf /"', 'high', false, 'a here-string feeds bash'],
    ['python <<EOF\nprint(1)\nEOF', 'high', false, 'a heredoc feeds python'],
    ['cat <<EOF | perl\nprint 1\nEOF', 'high', false, 'newline in the command'],
    ['ls | xargs rm', 'high', false, 'its input adds paths'],
    ['ls | xargs -I{} sh -c "rm {}"', 'high', false, 'sh runs'],
    ['ls | xargs rg --files-with-matches x', 'high', false, 'its input adds arguments'],
    ['ls | xargs sed s/a/b/', 'high', false, 'its input adds arguments'],
    ['rg --pre cat foo', 'high', false, 'rg --pre'],
    ['rg --pre=./evil.sh foo', 'high', false, 'rg --pre'],
    ['rg foo *', 'high', false, 'may expand to an option'],
    ['sort -o /tmp/out in.txt', 'high', false, 'sort -o'],
    ['sort -uo out.txt in.txt', 'high', false, 'sort -o'],
    ['sort --compress-program=sh big.txt', 'high', false, 'sort --compress-program'],
    ['sort --compress=sh big.txt', 'high', false, 'sort --compress'],
    ['sort --output=x in.txt', 'high', false, 'sort --output'],
    ['ls | tee /etc/motd', 'high', false, 'tee writes /etc/motd outside the roots'],
    ["awk 'BEGIN { system(\"id\") }'", 'high', false, 'awk program contains `system`'],
    ["awk '{ print > \"/tmp/x\" }' f", 'high', false, 'awk program contains `>`'],
    ["awk '{ print | \"sh\" }' f", 'high', false, 'awk program contains `|`'],
    ['awk -f prog.awk f', 'high', false, 'options other than -F and -v'],
    ["sed -i 's/a/b/' /etc/hosts", 'high', false, 'sed -i writes /etc/hosts outside the roots'],
    ["sed 's/x/id/e' f", 'high', false, 'the `e` flag of s'],
    ["sed '1e id' f", 'high', false, 'the `e` command runs a shell command'],
    ["sed 's/x/y/w /tmp/out' f", 'high', false, 'the `w` flag of s writes a file'],
    ["sed -n '/x/w out' f", 'high', false, 'the `w` command writes a file'],
    ['sed -f script.sed f', 'high', false, 'the script comes from a file'],
    ['ls "unterminated', 'high', false, 'the parser could not fully read it'],
    ['ls )', 'high', false, 'the parser could not fully read it'],
    ['{rm,-rf,/}', 'high', false, 'the parser could not fully read it'],
    ['f() { rm -rf /; }; f', 'high', false, 'function definition is not classified'],
    ['for f in *; do cat $f; done', 'high', false, 'for statement is not classified'],
    ['if true; then ls; fi', 'high', false, 'if statement is not classified'],
    ['(cd src; npm test)', 'high', false, 'only low commands may be chained'],
    ['coproc cat', 'high', false, 'coproc starts a coprocess'],
    ['echo $((x=5))', 'high', false, 'arithmetic expansion'],
    ['((x++))', 'high', false, 'is not classified'],
    ['$CMD -la', 'high', false, 'the command name `$CMD` is only known when it runs'],
    ['${CMD} -la', 'high', false, 'only known when it runs'],
    ['l? -la', 'high', false, 'the command name `l?` is only known when it runs'],
    ['/bin/l* -la', 'high', false, 'only known when it runs'],
    ['*', 'high', false, 'only known when it runs'],
    ['command rm -rf build', 'medium', false, 'rm writes inside the roots'],
    ['env rm -rf /', 'high', false, 'rm writes / outside the roots'],
    ['env FOO=bar ls', 'high', false, 'env FOO=bar: changes the environment'],
    ['env -i ls', 'high', false, 'changes the environment'],
    ['exec ls', 'low', true, 'ls only reads'],
    ['nice -n 5 curl x', 'high', false, 'curl reaches the network'],
    ['builtin eval ls', 'high', false, 'eval runs'],
    ['alias ls=rm', 'high', false, 'alias changes the state of the shell'],
    ['source ./env.sh', 'high', false, 'source runs a script'],
    ['. ./env.sh', 'high', false, '. runs a script'],
    ['less README.md', 'high', false, 'less is a pager'],
    ['more README.md', 'high', false, 'more is a pager'],
    ['vim README.md', 'high', false, 'vim is an editor'],
    ['/bin/ls', 'high', false, '/bin/ls runs a program by its path'],
    ['./ls', 'high', false, 'runs a program by its path'],
    ['python script.py', 'high', false, 'python is not a known'],
    ['node -e "1"', 'high', false, 'node is not a known'],
    ['rm -rf /', 'high', false, 'rm writes / outside the roots'],
    ['rm -rf .', 'high', false, 'would remove or move the root'],
    ['rm -rf ~', 'high', false, 'only known when the command runs'],
    ['rm -rf $DIR', 'high', false, 'only known when the command runs'],
    ['rm -rf ../*', 'high', false, 'outside the roots'],
    ['rm -rf src/*/../../..', 'high', false, 'is a glob and may match a symbolic link out of the roots'],
    ['cp -t /etc x', 'high', false, 'cp writes /etc outside the roots'],
    ['cp -t/etc x', 'high', false, 'cp writes /etc outside the roots'],
    ['cp --target-directory=/etc x', 'high', false, 'outside the roots'],
    ['mv x /tmp/', 'high', false, 'outside the roots'],
    ['chmod +x x', 'high', false, 'chmod is not a known'],
    ['npm install', 'high', false, 'npm is not a known'],
    ['pnpm add left-pad', 'high', false, 'pnpm is not a known'],
    ['printf -v PATH /tmp', 'high', false, 'printf -v'],
    ['tree -o /tmp/x', 'high', false, 'tree -o'],
    ['uniq in.txt out.txt', 'high', false, 'a second operand is the file uniq writes'],
    ['date 010100002030', 'high', false, 'sets the clock'],
    ['date -s tomorrow', 'high', false, 'date -s'],
    ['fd -x rm', 'high', false, 'fd -x'],
    ['echo $"x"', 'high', false, 'is not read by this check'],
    ['', 'high', false, 'empty command'],
    ['time ls', 'low', true, 'ls only reads'],
    ['ls | bash', 'high', false, 'bash runs'],
    ['rg {--pre=sh,foo} x', 'high', false, 'may expand to an option'],
    ['cat <<EOF | python3\nimport os\nEOF', 'high', false, 'python3 is not a known'],
    ['cat <<EOF > /etc/x\n$(id)\nEOF', 'high', false, 'redirect to /etc/x outside the roots'],
    ['cat <<EOF\n$(id)\nEOF', 'high', false, 'command substitution $(…)'],
    ['ls\0rm -rf /', 'high', false, 'NUL byte'],
    ['ls &&', 'high', false, 'a word is missing'],
    ['echo "$(ls', 'high', false, 'the parser could not fully read it'],
    ['exec 3<>/etc/x', 'high', false, 'the parser could not fully read it'],
    ['ls !(x)', 'high', false, 'the parser could not fully read it'],
    ['ag --pager=sh x', 'high', false, 'ag --pager'],
    ['rg --hostname-bin=./x --hyperlink-format=default foo', 'high', false, 'rg --hostname-bin'],
    ['ls > /dev/tcp/1.2.3.4/80', 'high', false, "network through bash's /dev/tcp"],
    ['X=$(rm -rf /)', 'high', false, 'command substitution $(…)'],
    ['echo ${x:-$(id)}', 'high', false, 'command substitution $(…)'],
    ['cat <<< $(id)', 'high', false, 'command substitution $(…)'],
    ['"" ls', 'high', false, 'empty command name'],
    ['$\'rm\' -rf x', 'high', false, 'only known when it runs'],
    ['git worktree add /tmp/x', 'high', false, 'not a subcommand this check knows'],
    ['command -pv ls', 'high', false, 'an option this check does not know'],
    ['exec -a name ls', 'high', false, 'an option this check does not know'],
  ]);
});

describe('xargs feeding a wrapper without a command: the input is the command', () => {
  check([
    ['echo touch pw | xargs env', 'high', false, "env gets its command from xargs's input"],
    ['echo touch pw | xargs xargs', 'high', false, "xargs gets its command from xargs's input"],
    ['echo touch pw | xargs nice', 'high', false, "nice gets its command from xargs's input"],
    ['echo touch pw | xargs nice -n 5', 'high', false, "nice gets its command from xargs's input"],
    ['echo touch pw | xargs timeout 5', 'high', false, "timeout gets its command from xargs's input"],
    ['echo touch pw | xargs command', 'high', false, "command gets its command from xargs's input"],
    ['echo touch pw | xargs stdbuf -o0', 'high', false, "stdbuf gets its command from xargs's input"],
    ['echo touch pw | xargs time', 'high', false, "time gets its command from xargs's input"],
    ['echo touch pw | xargs -0 exec', 'high', false, "exec gets its command from xargs's input"],
    ['ls | xargs', 'low', true, 'echo only reads'],
    ['ls | xargs nice grep x', 'low', true, 'grep only reads'],
  ]);
});

describe('strings bash evaluates as arithmetic or a variable name run the $(…) in their subscripts', () => {
  check([
    ["[[ 'a[$(touch pw)]' -eq 1 ]]", 'high', false, '[[ -eq ]] evaluates'],
    ['[[ $x -lt 3 ]]', 'high', false, '[[ -lt ]] evaluates `$x` as arithmetic'],
    ['[[ "1" -ge 1 ]]', 'high', false, 'only plain integers are read here'],
    ['[[ 1 -eq 2 ]] && ls', 'low', true, 'a test only compares'],
    ['[[ $x == 1 ]]', 'low', true, 'a test only compares'],
    ["test -v 'a[$(touch pw)]'", 'high', false, 'test -v evaluates the subscript'],
    ["test -R 'a[$(touch pw)]'", 'high', false, 'test -R evaluates the subscript'],
    ["[ -v 'a[$(touch pw)]' ]", 'high', false, '-v evaluates the subscript'],
    ["[[ -v 'a[$(touch pw)]' ]]", 'high', false, '-v evaluates the subscript'],
    ['[ * ]', 'high', false, 'may expand to -v'],
    ['test *', 'high', false, 'may expand to -v'],
    ["[ 'a[$(touch pw)]' -eq 1 ]", 'low', true, 'a test only compares'],
    ["echo 'x'; echo ${!_}", 'high', false, 'is an indirect expansion'],
    ['echo ${!name}', 'high', false, 'is an indirect expansion'],
    ["echo '$(touch pw)'; echo ${_@P}", 'high', false, '`${_@P}` makes bash evaluate the value'],
    ['echo ${PWD@P}', 'high', false, '`${PWD@P}` makes bash evaluate the value'],
    ['echo ${x@E}', 'high', false, '`${x@E}` makes bash evaluate the value'],
    ['echo ${x@A}', 'high', false, '`${x@A}` makes bash evaluate the value'],
    ['echo ${x@Q}', 'low', true, 'echo only reads'],
    ['echo $_', 'high', false, '`$_` repeats an argument of the previous command'],
    ['echo "${_}"', 'high', false, '`$_` repeats an argument of the previous command'],
    ["echo 'a[$(id)]'; (( _ ))", 'high', false, '`$_` repeats an argument of the previous command'],
    ["echo 'a[$(id)]'; echo $(( _ + 1 ))", 'high', false, '`$_` repeats an argument of the previous command'],
    ['echo $a_b', 'low', true, 'echo only reads'],
    ['echo ${a[i]}', 'high', false, 'the array subscript `a[i]` is evaluated as arithmetic'],
    ['echo ${a[1]} ${a[@]}', 'low', true, 'echo only reads'],
    ['echo ${PWD:0:$x}', 'high', false, 'substring bounds in `${PWD:0:$x}` are evaluated as arithmetic'],
    ['echo ${x:1:2} ${x: -1} ${x:-default}', 'low', true, 'echo only reads'],
    ['echo $(( x + 1 ))', 'high', false, 'arithmetic expansion'],
    ['let x=1', 'high', false, 'let is not a known'],
    ['declare -i x=1', 'high', false, 'changes shell variables'],
    ['local -i x=1', 'high', false, 'changes shell variables'],
    ['typeset -i x=1', 'high', false, 'changes shell variables'],
    ['printf -v x %s y', 'high', false, 'printf -v'],
  ]);
});

describe('substitutions the grammar reads as plain text', () => {
  check([
    ['echo ${x:-`id`}', 'high', false, 'holds a substitution the parser does not show'],
    ['echo "${x:-`id`}"', 'high', false, 'holds a substitution the parser does not show'],
    ["echo '`id`' \\`id\\` \"\\$(id)\"", 'low', true, 'echo only reads'],
    ['echo "${x:-\'`id`\'}"', 'high', false, 'is not quoted inside "…": its substitution runs'],
    ['echo "${x:-$\'$(id)\'}"', 'high', false, 'is not quoted inside "…": its substitution runs'],
    ["echo ${x:-'`id`'}", 'low', true, 'echo only reads'],
    ['echo ${x/`id`/y} ${x#`id`} ${x[`id`]}', 'high', false, 'holds a substitution the parser does not show'],
  ]);
});

describe('glob and expansion write targets may match a symbolic link out of the roots', () => {
  check([
    ['echo X > ln*', 'high', false, 'redirect target: `ln*` is a glob and may match a symbolic link'],
    ['echo X | tee -a ln?', 'high', false, 'tee: `ln?` is a glob and may match a symbolic link'],
    ['touch src/*.ts', 'high', false, 'touch: `src/*.ts` is a glob'],
    ['cp a.ts ln*', 'high', false, 'cp: `ln*` is a glob'],
    ['cp -t ln* a.ts', 'high', false, 'cp: `ln*` is a glob'],
    ['echo X > $OUT', 'high', false, 'redirect target: `$OUT` is only known when the command runs'],
    ['cp src/*.ts build/', 'medium', false, 'cp writes inside the roots'],
    ['mv *.txt src/', 'medium', false, 'mv writes inside the roots'],
    ['rm src/*.o', 'medium', false, 'rm writes inside the roots'],
    ['rm -rf ln*/', 'high', false, 'rm: `ln*/` is a glob and may match a symbolic link'],
    ['rm src/*/x', 'high', false, 'rm: `src/*/x` is a glob and may match a symbolic link'],
  ]);
});

describe("network through bash's /dev/tcp and /dev/udp", () => {
  check([
    ['cat < /dev/tcp/127.0.0.1/80', 'high', false, "network through bash's /dev/tcp"],
    ['echo hi > /dev/udp/127.0.0.1/53', 'high', false, "network through bash's /dev/tcp"],
    ['cat < "/dev/tcp/$HOST/80"', 'high', false, "network through bash's /dev/tcp"],
    ['cat < /dev/$PROTO/host/53', 'high', false, "network through bash's /dev/tcp"],
  ]);
});

describe("gawk's /inet files are network connections", () => {
  check([
    ["awk '{print}' /inet/tcp/0/127.0.0.1/22", 'high', false, 'gawk opens /inet files as network connections'],
    ["ls | xargs awk '{print}'", 'high', false, "its input names files, which may be gawk's /inet network connections"],
    ["awk '{print}' README.md", 'low', true, 'awk program only reads'],
  ]);
});

describe('option tables read clusters as the command does', () => {
  check([
    ['date -I --set=2020-01-01', 'high', false, 'date --set=2020-01-01: not read-only'],
    ['date -I -s 2020-01-01', 'high', false, 'date -s: not read-only'],
    ['date -Iseconds', 'low', true, 'date only reads'],
    ['tree -Lo 1 out.txt', 'high', false, 'tree -o: not read-only'],
    ['tree -L 2 -o out.txt', 'high', false, 'tree -o: not read-only'],
    ['tree -L 2 src', 'low', true, 'tree only reads'],
  ]);
});

describe('writes inside .git: hooks and config run programs later', () => {
  check([
    ['echo x > .git/hooks/pre-commit', 'high', false, 'writes inside .git'],
    ['cp hook.sh .git/hooks/pre-commit', 'high', false, 'writes inside .git'],
    ['tee .git/config < cfg', 'high', false, 'writes inside .git'],
    ['mv cfg sub/.git/info/attributes', 'high', false, 'writes inside .git'],
    ['touch .git/x', 'high', false, 'writes inside .git'],
    ['mkdir -p .git/hooks', 'high', false, 'writes inside .git'],
    ['rm -rf .git', 'high', false, 'writes inside .git'],
    ["sed -i 's/a/b/' .git/config", 'high', false, 'writes inside .git'],
    ['echo x > .gitignore', 'medium', false, 'redirect writes'],
  ]);
});

describe('builtins that change how the rest of the line runs', () => {
  check([
    ['exec > file', 'high', false, 'exec without a command redirects the shell itself'],
    ['exec 3> /etc/x', 'high', false, 'exec without a command redirects the shell itself'],
    ['hash -p /bin/sh ls; ls', 'high', false, 'hash changes the state of the shell'],
    ['enable -f ./x.so x', 'high', false, 'enable is not a known'],
    ["trap 'id' DEBUG", 'high', false, 'trap changes the state of the shell'],
    ['alias ls=id', 'high', false, 'alias changes the state of the shell'],
    ['command -p ls', 'high', false, 'command -p: an option this check does not know'],
    ['builtin echo x', 'high', false, 'builtin runs a shell builtin by name'],
    ['cd - && echo x > y', 'high', false, 'is relative to a directory a cd left unknown'],
  ]);
});

describe('lines built to exhaust the classifier', () => {
  it.each([
    ['command '.repeat(100_000) + 'ls', 'more than 8 wrappers deep'],
    ['sudo '.repeat(20_000) + 'ls', 'sudo runs a command as another user'],
    ['('.repeat(50_000) + 'ls' + ')'.repeat(50_000), 'nested too deeply to read'],
    ['$('.repeat(300) + 'ls' + ')'.repeat(300), 'command substitution $(…)'],
  ])('%#: high, quickly', (command, reason) => {
    const started = performance.now();
    const result = classifier.classify(command, root);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.tier).toBe('high');
    expect(result.reasons.join(' | ')).toContain(reason);
  });
});
