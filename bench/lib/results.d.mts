export declare function withoutMachinePaths(text: string): string;
export declare function writeResult(file: string, text: string): void;
