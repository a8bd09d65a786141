/** The version of the Rust crates the native addon was built from. */
export declare function version(): string;
/** The media type of Ferrule's error responses: `application/problem+json`. */
export declare function problemJson(): string;
