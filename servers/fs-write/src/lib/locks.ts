/**
 * Serialises changes to one path within this server, so two clients editing one file run one
 * after the other; across processes, the identity check before the rename catches the other.
 */
export class PathLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(path: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(path) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.tails.set(path, tail);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(path) === tail) this.tails.delete(path);
    }
  }
}
