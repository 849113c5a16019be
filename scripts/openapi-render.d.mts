// Types of openapi-render.mjs for the tests that import it.
export declare const COMMITTED_BASE_URL: string;
export declare function renderDocument(root: string): Promise<string>;
export declare function renderTypes(documentText: string): Promise<string>;
