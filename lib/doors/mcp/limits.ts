/**
 * The MCP server's documented limits. A text within TEXT_LIMIT always fits in
 * a request within REQUEST_LIMIT_BYTES, whatever its characters: JSON spells
 * a character in at most 12 bytes (a surrogate pair as two \uXXXX escapes).
 */

/** Bytes in one request line, its line end not counted. A longer line is refused with a JSON-RPC error. */
export const REQUEST_LIMIT_BYTES = 4 * 1024 * 1024;

/** Characters (code points) in type_text's text and set_value's value. */
export const TEXT_LIMIT = 100_000;
