export declare const repo: string;
export declare function policySchemaFiles(): Promise<Record<string, Record<string, unknown>>>;
