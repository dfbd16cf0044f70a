/**
 * A worker's JSON answer read up to a size: `?worker=` may name any server, and `response.json()` read
 * whatever it sent (a huge body, or a small gzip one that inflates, held whole in the page's memory).
 * The body is read as a stream (decoded bytes counted) and the read stops at the bound.
 */

export const MAX_HEALTH_BYTES = 1024 * 1024; // a worker's /health is about 1 KiB
export const MAX_VOICES_BYTES = 8 * 1024 * 1024; // 1 000 uploads (--max-voices) with long transcripts

/** A body over its bound: `.message` says the bound in words. */
export class BodyTooLarge extends Error {
  constructor(maxBytes) {
    super(`its body is over ${sizeInWords(maxBytes)}`);
    this.name = "BodyTooLarge";
  }
}

export function sizeInWords(bytes) {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/**
 * The parsed JSON of `response`, or null when it is not JSON; BodyTooLarge once more than `maxBytes`
 * are read (or stated by Content-Length) and the rest is not read. A read that fails (the fetch's
 * timeout: TimeoutError) throws as `response.json()` did.
 */
export async function readJson(response, maxBytes) {
  const stated = Number(response.headers.get("content-length") ?? NaN);
  if (Number.isFinite(stated) && stated > maxBytes) {
    response.body?.cancel().catch(() => {});
    throw new BodyTooLarge(maxBytes);
  }
  const reader = response.body?.getReader();
  if (!reader) return null;
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      reader.cancel().catch(() => {});
      throw new BodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}
