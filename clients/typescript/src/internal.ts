/**
 * What the client and startServer() share, outside the package's exports
 * (package.json's "exports" names index and local only).
 */

/**
 * serverGone holds, for the client of a server startServer() started, a
 * function that resolves with the words for that server's exit, or
 * undefined while it runs: called when a request got no answer.
 */
export const serverGone = new WeakMap<object, () => Promise<string | undefined>>();
