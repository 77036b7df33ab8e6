import type { Place } from './paths.js';
import { high, type Verdict, type Word } from './types.js';

interface WriteSpec {
  /** Short option letters allowed, alone or in clusters. */
  readonly flags: string;
  /** Short options taking a value; the value is checked like a path (harmless for a mode). */
  readonly valueFlags?: string;
  /** Long options allowed; `--name=value` values are checked like paths. */
  readonly long: readonly string[];
  /** Removes or moves away its operands: a root itself must not be one. */
  readonly removes?: boolean;
  /**
   * Operands it acts on as links, not through them (rm removes a link, mv moves it, cp reads it):
   * a glob there may match links without the write leaving the roots. Elsewhere a glob is unknown.
   */
  readonly linksSafe?: 'all' | 'sources';
}

const WRITES: Readonly<Record<string, WriteSpec>> = {
  mkdir: { flags: 'pv', valueFlags: 'm', long: ['--parents', '--verbose', '--mode'] },
  touch: { flags: 'acm', long: ['--no-create'] },
  rm: { flags: 'rRfvd', long: ['--recursive', '--force', '--verbose', '--dir'], removes: true, linksSafe: 'all' },
  rmdir: { flags: 'pv', long: ['--parents', '--verbose', '--ignore-fail-on-non-empty'], removes: true, linksSafe: 'all' },
  cp: { flags: 'rRapfnvuLPTl', valueFlags: 't', long: ['--recursive', '--archive', '--force', '--no-clobber', '--verbose', '--update', '--target-directory', '--no-target-directory'], linksSafe: 'sources' },
  mv: { flags: 'fnvuT', valueFlags: 't', long: ['--force', '--no-clobber', '--verbose', '--update', '--target-directory', '--no-target-directory'], removes: true, linksSafe: 'sources' },
  tee: { flags: 'ai', long: ['--append', '--ignore-interrupts'] },
};

/** The verdict for a command that writes files, or undefined when it is not one of them. */
export function writeVerdict(name: string, args: readonly Word[], argumentsFromInput: boolean, place: (word: Word) => Place): Verdict | undefined {
  const spec = WRITES[name];
  if (spec === undefined) return undefined;
  if (argumentsFromInput) return high(`${name}: its input adds paths nobody can check`);
  const paths: Word[] = [];
  /** The -t / --target-directory value: where cp and mv write. */
  let target: Word | undefined;
  let optionsEnded = false;
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static' || optionsEnded || !word.text.startsWith('-') || word.text === '-') {
      paths.push(word);
      continue;
    }
    const text = word.text;
    if (text === '--') optionsEnded = true;
    else if (text.startsWith('--')) {
      const [option = '', value] = text.split('=', 2);
      if (!spec.long.includes(option)) return high(`${name} ${text}: an option this check does not know`);
      if (value !== undefined) {
        const valueWord: Word = { kind: 'static', text: value };
        paths.push(valueWord);
        if (option === '--target-directory') target = valueWord;
      }
    } else {
      for (let at = 1; at < text.length; at++) {
        const letter = text[at] as string;
        if (spec.valueFlags?.includes(letter)) {
          const attached = text.slice(at + 1);
          const value = attached === '' ? args[++index] : { kind: 'static' as const, text: attached };
          if (value !== undefined) paths.push(value);
          if (letter === 't') target = value;
          break;
        }
        if (!spec.flags.includes(letter)) return high(`${name} -${letter}: an option this check does not know`);
      }
    }
  }
  if (name === 'tee' && paths.length === 0) return { tier: 'low', readOnly: true, reason: 'tee without files only copies its input' };
  const destination = target ?? paths[paths.length - 1];
  const linkSafe = (path: Word) => spec.linksSafe === 'all' || (spec.linksSafe === 'sources' && path !== destination);
  return writesInsideRoots(name, paths, spec.removes === true, place, linkSafe);
}

/**
 * Medium when every path is inside the roots; high for a path outside, unknown, inside a .git
 * folder, or a root removed. A glob is unknown unless `linkSafe` says the command does not write through links there.
 */
export function writesInsideRoots(what: string, paths: readonly Word[], removes: boolean, place: (word: Word) => Place, linkSafe: (path: Word) => boolean = () => false): Verdict {
  for (const path of paths) {
    // `rm lnk*/x` goes through whatever the glob matched: only a glob in the last component can stay a link.
    const throughLinks = path.kind === 'glob' && (!linkSafe(path) || path.text.slice(path.staticPrefix.length).includes('/'));
    if (throughLinks) return high(`${what}: \`${path.text}\` is a glob and may match a symbolic link out of the roots`);
    const where = place(path);
    if (where.where === 'unknown') return high(`${what}: ${where.why}`);
    if (where.where === 'outside') return high(`${what} writes ${where.path} outside the roots`);
    if (where.where === 'root' && removes) return high(`${what} would remove or move the root ${where.path}`);
    if (where.where === 'inside' && where.gitFolder) return high(`${what} writes ${where.path}: writes inside .git: hooks and config run programs later`);
  }
  return { tier: 'medium', readOnly: false, reason: `${what} writes inside the roots` };
}
