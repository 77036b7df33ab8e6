/**
 * Reads a sed script far enough to find the commands that run programs or write files:
 * `e`, `w`/`W`, and the `e` and `w` flags of `s`. Anything it does not understand counts as unsafe.
 * Returns the offending part, or undefined when the script only reads.
 */
export function sedScriptDanger(script: string): string | undefined {
  const reader = new ScriptReader(script);
  while (reader.skipSeparators()) {
    if (reader.peek() === '#') {
      reader.skipLine();
      continue;
    }
    if (!reader.address()) return 'an address sed syntax this check does not read';
    const command = reader.next();
    const danger = reader.command(command);
    if (danger !== undefined) return danger;
  }
  return undefined;
}

const SIMPLE_COMMANDS = new Set(['{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F']);
const NUMBERED_COMMANDS = new Set(['q', 'Q', 'l', 'L']);
const LABEL_COMMANDS = new Set([':', 'b', 't', 'T', 'v']);
const TEXT_COMMANDS = new Set(['a', 'i', 'c', 'r', 'R']);

class ScriptReader {
  private at = 0;

  constructor(private readonly script: string) {}

  peek(): string {
    return this.script[this.at] ?? '';
  }

  next(): string {
    return this.script[this.at++] ?? '';
  }

  /** Skips blanks, `;` and newlines; false at the end of the script. */
  skipSeparators(): boolean {
    while (' \t\n;'.includes(this.peek()) && this.at < this.script.length) this.at++;
    return this.at < this.script.length;
  }

  skipLine(): void {
    const end = this.script.indexOf('\n', this.at);
    this.at = end < 0 ? this.script.length : end + 1;
  }

  /** `addr`, `addr,addr`, `first~step`, then an optional `!`. */
  address(): boolean {
    if (!this.oneAddress()) return false;
    if (this.peek() === ',') {
      this.at++;
      if (this.peek() === '+' || this.peek() === '~') this.at++;
      if (!this.oneAddress()) return false;
    }
    while (this.peek() === ' ' || this.peek() === '!') this.at++;
    return true;
  }

  private oneAddress(): boolean {
    const char = this.peek();
    if (char === '$') this.at++;
    else if (char >= '0' && char <= '9') {
      this.digits();
      if (this.peek() === '~') {
        this.at++;
        this.digits();
      }
    } else if (char === '/' || char === '\\') {
      if (char === '\\') this.at++;
      const delimiter = this.next();
      if (!this.delimited(delimiter)) return false;
      while (this.peek() === 'I' || this.peek() === 'M') this.at++;
    }
    return true;
  }

  private digits(): void {
    while (this.peek() >= '0' && this.peek() <= '9') this.at++;
  }

  /** Reads up to the closing delimiter, honouring backslash escapes; false when it never closes. */
  private delimited(delimiter: string): boolean {
    if (delimiter === '' || delimiter === '\n' || delimiter === '\\') return false;
    while (this.at < this.script.length) {
      const char = this.next();
      if (char === '\\') this.at++;
      else if (char === delimiter) return true;
    }
    return false;
  }

  command(command: string): string | undefined {
    if (SIMPLE_COMMANDS.has(command)) return undefined;
    if (NUMBERED_COMMANDS.has(command)) {
      while (this.peek() === ' ') this.at++;
      this.digits();
      return undefined;
    }
    if (LABEL_COMMANDS.has(command)) {
      while (!';\n'.includes(this.peek()) && this.at < this.script.length) this.at++;
      return undefined;
    }
    if (TEXT_COMMANDS.has(command)) {
      this.skipLine();
      return undefined;
    }
    if (command === 'w' || command === 'W') return `the \`${command}\` command writes a file`;
    if (command === 'e') return 'the `e` command runs a shell command';
    if (command === 's') return this.substitution();
    if (command === 'y') {
      const delimiter = this.next();
      return this.delimited(delimiter) && this.delimited(delimiter) ? undefined : 'an unterminated y command';
    }
    return `the command \`${command}\`, which this check does not know`;
  }

  private substitution(): string | undefined {
    const delimiter = this.next();
    if (!this.delimited(delimiter) || !this.delimited(delimiter)) return 'an unterminated s command';
    for (;;) {
      const flag = this.peek();
      if (flag === 'e') return 'the `e` flag of s runs the pattern space as a command';
      if (flag === 'w') return 'the `w` flag of s writes a file';
      if (flag === '' || !'gpiImM0123456789'.includes(flag)) return undefined;
      this.at++;
    }
  }
}
