/** The tools one client session has loaded, least recently used first out. */
export class LoadedTools {
  private readonly order = new Map<string, number>();
  private tick = 0;

  constructor(private readonly maxActive: number) {}

  has(qualified: string): boolean {
    return this.order.has(qualified);
  }

  /** Loads or refreshes tools; returns those evicted to stay within max_active. */
  load(names: readonly string[]): string[] {
    for (const name of names) this.order.set(name, ++this.tick);
    const evicted: string[] = [];
    while (this.order.size > this.maxActive) {
      const oldest = [...this.order.entries()].reduce((a, b) => (b[1] < a[1] ? b : a))[0];
      this.order.delete(oldest);
      evicted.push(oldest);
    }
    return evicted;
  }

  touch(qualified: string): void {
    if (this.order.has(qualified)) this.order.set(qualified, ++this.tick);
  }

  unload(names: readonly string[]): string[] {
    return names.filter((name) => this.order.delete(name));
  }

  list(): string[] {
    return [...this.order.keys()];
  }
}
