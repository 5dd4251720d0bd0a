// Searching a capture for secrets the way a reader would find them: every
// string of a JSON value, plus base64-looking strings decoded (latin1) and
// URL escapes undone (issue 34: base64 hides a secret from grep only).

/** Every string of a JSON value, with its base64 and URL-decoded readings. */
export function decodedStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    out.push(value);
    if (/^[A-Za-z0-9+/=\s]{8,}$/.test(value)) out.push(Buffer.from(value, 'base64').toString('latin1'));
    try {
      out.push(decodeURIComponent(value));
    } catch {
      // not URL-encoded
    }
  } else if (Array.isArray(value)) for (const v of value) decodedStrings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) decodedStrings(v, out);
  return out;
}
