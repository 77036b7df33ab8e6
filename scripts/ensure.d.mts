export declare const repo: string;
export declare function pnpmCommand(): string[];
export declare function buildNeeded(options?: { tests?: boolean }): string | undefined;
export declare function sqliteBindingProblem(execPath?: string): { kind: 'mismatch' | 'missing' | 'other'; detail: string } | undefined;
export declare function ensureInstalledAndBuilt(options?: { quiet?: boolean; tests?: boolean }): string[];
export declare function nodeVersionOk(): boolean;
export { execFileSync } from 'node:child_process';
