export declare const repo: string;
export declare function policySchemaFiles(): Promise<Record<string, Record<string, unknown>>>;
export declare function policySchemas(): Promise<{ entries: [string, { parse(value: unknown): unknown }][] }>;
