export declare function headersVersion(dir: string): string | undefined;
export declare function matchingNodedir(options?: { execPath?: string; version?: string; preset?: string | undefined }): string | undefined;
export declare function nodeGypEnv(env?: NodeJS.ProcessEnv, options?: { execPath?: string; version?: string; quiet?: boolean }): NodeJS.ProcessEnv;
