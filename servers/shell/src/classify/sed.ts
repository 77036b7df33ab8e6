/**
 * Reads a sed script with GNU sed 4.9's grammar (compile.c) far enough to find every command that
 * runs a program, writes a file or reads one named in the script: `e`, `w`, `W`, `r`, `R`, and the
 * `e` and `w` flags of `s`. sed compiles the whole script before it runs a line, so a script it
 * rejects runs nothing; what this reader does not understand counts as unsafe.
 * Returns the offending part, or undefined when the script only prints.
 *
 * Grammar points that decide where text stops being a command:
 * - a label (`:x`, `b x`, `t x`, `T x`, `v 4.2`) ends at whitespace, `;`, `}`, `#` or a newline (4.9),
 *   and after whitespace the next command may follow on the same line; older GNU seds read a label up
 *   to `;` or a newline, so a label followed on its line by more text is read both ways and refused;
 * - the text of `a`, `i`, `c` and the file name of `r`, `R`, `w`, `W` run to an unescaped newline;
 * - a regular expression or replacement runs to the unescaped delimiter (brackets do not protect it).
 */
export function sedScriptDanger(script: string): string | undefined {
  const reader = new ScriptReader(script);
  // `#n` on the first line is -n; any other comment runs to the end of its line.
  while (reader.skipSeparators()) {
    if (reader.peek() === '#') {
      reader.skipLine();
      continue;
    }
    if (!reader.address()) return 'an address sed syntax this check does not read';
    const danger = reader.command(reader.next());
    if (danger !== undefined) return danger;
  }
  return undefined;
}

const SIMPLE_COMMANDS = new Set(['{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F']);
/** Commands with an optional number: exit code or line length. */
const NUMBERED_COMMANDS = new Set(['q', 'Q', 'l']);
const LABEL_COMMANDS = new Set([':', 'b', 't', 'T', 'v']);
const TEXT_COMMANDS = new Set(['a', 'i', 'c']);
const FILE_COMMANDS: Readonly<Record<string, string>> = {
  r: 'the `r` command reads a file named in the script',
  R: 'the `R` command reads a file named in the script',
  w: 'the `w` command writes a file',
  W: 'the `W` command writes a file',
};
const BLANKS = ' \t';

class ScriptReader {
  private at = 0;

  constructor(private readonly script: string) {}

  peek(): string {
    return this.script[this.at] ?? '';
  }

  next(): string {
    return this.script[this.at++] ?? '';
  }

  private atEnd(): boolean {
    return this.at >= this.script.length;
  }

  /** Skips blanks, `;` and newlines; false at the end of the script. */
  skipSeparators(): boolean {
    while (!this.atEnd() && ' \t\n;'.includes(this.peek())) this.at++;
    return !this.atEnd();
  }

  private skipBlanks(): void {
    while (!this.atEnd() && BLANKS.includes(this.peek())) this.at++;
  }

  skipLine(): void {
    const end = this.script.indexOf('\n', this.at);
    this.at = end < 0 ? this.script.length : end + 1;
  }

  /** Text up to an unescaped newline (a/i/c text, a one-liner `a foo\` continues on the next line). */
  private skipText(): void {
    while (!this.atEnd()) {
      const char = this.next();
      if (char === '\\') this.at++;
      else if (char === '\n') return;
    }
  }

  /** `addr`, `addr,addr`, `addr,+N`, `addr,~N`, `first~step`, `0,/re/`, then blanks and an optional `!`. */
  address(): boolean {
    if (!this.oneAddress()) return false;
    this.skipBlanks();
    if (this.peek() === ',') {
      this.at++;
      this.skipBlanks();
      if (this.peek() === '+' || this.peek() === '~') {
        this.at++;
        if (!this.digits()) return false;
      } else if (!this.oneAddress(true)) return false;
    }
    this.skipBlanks();
    if (this.peek() === '!') {
      this.at++;
      this.skipBlanks();
    }
    return true;
  }

  /** `required`: after a comma an address must follow. */
  private oneAddress(required = false): boolean {
    const char = this.peek();
    if (char === '$') this.at++;
    else if (char >= '0' && char <= '9') {
      this.digits();
      if (this.peek() === '~') {
        this.at++;
        this.digits();
      }
    } else if (char === '/' || char === '\\') {
      this.at++;
      const delimiter = char === '\\' ? this.next() : '/';
      if (!this.delimited(delimiter)) return false;
      while (this.peek() === 'I' || this.peek() === 'M') this.at++;
    } else return !required;
    return true;
  }

  private digits(): boolean {
    const start = this.at;
    while (this.peek() >= '0' && this.peek() <= '9') this.at++;
    return this.at > start;
  }

  /** Reads up to the closing delimiter, honouring backslash escapes; false when it never closes. */
  private delimited(delimiter: string): boolean {
    if (delimiter === '' || delimiter === '\n' || delimiter === '\\') return false;
    while (!this.atEnd()) {
      const char = this.next();
      if (char === '\\') this.at++;
      else if (char === delimiter) return true;
    }
    return false;
  }

  command(command: string): string | undefined {
    if (SIMPLE_COMMANDS.has(command)) return undefined;
    if (NUMBERED_COMMANDS.has(command)) {
      this.skipBlanks();
      this.digits();
      return this.endOfCommand(command);
    }
    if (LABEL_COMMANDS.has(command)) return this.label(command);
    if (TEXT_COMMANDS.has(command)) {
      this.skipText();
      return undefined;
    }
    const file = FILE_COMMANDS[command];
    if (file !== undefined) return file;
    if (command === 'e') return 'the `e` command runs a shell command';
    if (command === 's') return this.substitution();
    if (command === 'y') {
      const delimiter = this.next();
      return this.delimited(delimiter) && this.delimited(delimiter) ? this.endOfCommand('y') : 'an unterminated y command';
    }
    return `the command \`${shownCommand(command)}\`, which this check does not know`;
  }

  /** After a command only blanks, `;`, a newline, `}` or `#` may follow (sed refuses anything else). */
  private endOfCommand(command: string): string | undefined {
    this.skipBlanks();
    const char = this.peek();
    if (char === '' || ';\n}#'.includes(char)) return undefined;
    return `text after the \`${command}\` command that this check does not read`;
  }

  /**
   * GNU 4.9 ends a label at whitespace, `;`, `}` or `#` (`$!{N;ba}`); older seds at `;` or a newline,
   * where a `}` or `#` in the label leaves a block open or a jump unresolved, and sed runs nothing.
   * A label followed by more text on its line is read differently by the two: refused.
   */
  private label(command: string): string | undefined {
    this.skipBlanks();
    const start = this.at;
    while (!this.atEnd() && !' \t\n;}#'.includes(this.peek())) this.at++;
    const label = this.script.slice(start, this.at);
    if (command === ':' && label === '') return 'a `:` without a label';
    this.skipBlanks();
    const char = this.peek();
    if (char === '' || ';\n}#'.includes(char)) return undefined;
    return `the label of \`${command}\` is followed on its line by more text, which sed versions read differently (GNU sed 4.9 runs it as the next command)`;
  }

  private substitution(): string | undefined {
    const delimiter = this.next();
    if (!this.delimited(delimiter) || !this.delimited(delimiter)) return 'an unterminated s command';
    for (;;) {
      const flag = this.peek();
      if (flag === 'e') return 'the `e` flag of s runs the pattern space as a command';
      if (flag === 'w') return 'the `w` flag of s writes a file';
      if (flag === '' || !'gpiImM0123456789'.includes(flag)) return this.endOfCommand('s');
      this.at++;
    }
  }
}

function shownCommand(command: string): string {
  return command === '\n' ? '⏎' : command;
}
