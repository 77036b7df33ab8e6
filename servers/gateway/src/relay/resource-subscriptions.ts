import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ResolvedResource } from './resource-names.js';

/** One server's resource that some client connection is subscribed to. */
interface Subscription extends ResolvedResource {
  /** Each subscribed connection, with the URIs it subscribed by (what its updates carry). */
  readonly connections: Map<Server, Set<string>>;
  /** The server's subscribe, under way or done; each subscriber waits for it. */
  subscribed: Promise<void>;
}

/** How the registry talks to a server: its resources/subscribe and resources/unsubscribe. */
export interface SubscriptionTransport {
  subscribe(resource: ResolvedResource, signal: AbortSignal): Promise<void>;
  unsubscribe(resource: ResolvedResource): Promise<void>;
}

function keyOf(resource: ResolvedResource): string {
  return `${resource.namespace}\u0000${resource.uri}`;
}

/**
 * The subscriptions of every client connection, shared: a server is subscribed once per URI while
 * any connection is, unsubscribed when the last one leaves or closes, and subscribed again when it
 * comes back after a restart (its new process knows nothing of the old one's subscriptions).
 */
export class ResourceSubscriptions {
  private readonly byKey = new Map<string, Subscription>();

  constructor(private readonly transport: SubscriptionTransport) {}

  /** `clientUri` is the URI the client subscribed by; its updates carry it. */
  async subscribe(connection: Server, resource: ResolvedResource, clientUri: string, signal: AbortSignal): Promise<void> {
    const key = keyOf(resource);
    let subscription = this.byKey.get(key);
    if (!subscription) {
      const created: Subscription = { ...resource, connections: new Map(), subscribed: Promise.resolve() };
      created.subscribed = this.transport.subscribe(resource, signal).catch((error: unknown) => {
        // A failed first subscribe leaves nothing behind; a later one tries again.
        if (this.byKey.get(key) === created) this.byKey.delete(key);
        throw error;
      });
      this.byKey.set(key, (subscription = created));
    }
    await subscription.subscribed;
    let uris = subscription.connections.get(connection);
    if (!uris) subscription.connections.set(connection, (uris = new Set()));
    uris.add(clientUri);
  }

  /** Ends the connection's subscription made by `clientUri`, or else the one to `resource` by any URI. */
  unsubscribe(connection: Server, clientUri: string, resource: ResolvedResource | undefined): void {
    for (const subscription of this.byKey.values()) {
      const uris = subscription.connections.get(connection);
      if (!uris) continue;
      const byUri = uris.has(clientUri);
      if (!byUri && !(resource && keyOf(resource) === keyOf(subscription))) continue;
      if (byUri) uris.delete(clientUri);
      else uris.clear();
      if (uris.size === 0) this.leave(subscription, connection);
      return;
    }
  }

  /** A connection closed: every subscription of it ends. */
  closed(connection: Server): void {
    for (const subscription of [...this.byKey.values()]) if (subscription.connections.has(connection)) this.leave(subscription, connection);
  }

  private leave(subscription: Subscription, connection: Server): void {
    subscription.connections.delete(connection);
    if (subscription.connections.size > 0) return;
    this.byKey.delete(keyOf(subscription));
    void subscription.subscribed.then(
      () => this.transport.unsubscribe(subscription),
      () => undefined,
    );
  }

  /** The resources of `namespace` that some connection is subscribed to. */
  of(namespace: string): ResolvedResource[] {
    return [...this.byKey.values()].filter((subscription) => subscription.namespace === namespace).map(({ namespace: ns, uri }) => ({ namespace: ns, uri }));
  }

  /** Who to tell of an update of the server's `uri`: each subscribed connection and the URIs it subscribed by. */
  subscribersOf(resource: ResolvedResource): ReadonlyMap<Server, ReadonlySet<string>> {
    return this.byKey.get(keyOf(resource))?.connections ?? new Map();
  }
}
