export declare const CLUSTER_USER: string;
export declare function postgresBinDir(): string | undefined;
export interface Cluster {
  readonly url: string;
  readonly port: number;
  readonly passwordFile: string;
  readonly dir: string;
  stop(): void;
}
export declare function startCluster(dir: string, options?: { readonly durable?: boolean }): Promise<Cluster>;
export declare function stopCluster(dir: string): void;
