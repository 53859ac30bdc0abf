/**
 * What a stored snapshot file says it is. Apart from the schema (schema.ts)
 * so that writing a file needs no zod: loading zod costs about as much as
 * starting node, and only reading a stored file needs it.
 */
export const STORE_FORMAT = "axsnap-cli-snapshot";
/** 2: the window's id and kind (a ref is found again in the window it was printed in). */
export const STORE_VERSION = 2;
