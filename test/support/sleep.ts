/** A pause between polls of a real app, which gives no event to wait on for what is polled. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
