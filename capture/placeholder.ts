// How a redacted secret is spelt (redact.ts makes them, keyed; redact-values.ts
// and secretBytes mask bytes with them): the one place the format is written down.

/**
 * A placeholder as bb writes it, as a pattern's source: `<redacted:` and 8 hex digits of the secret's keyed hash, and
 * in binary payloads `~` up to the secret's length before its `>` (maskedPlaceholder). The one spelling `bb diff`'s
 * rule, the binding's tokens, bb replay's secrets and bb shadow's routes read it by.
 */
export const PLACEHOLDER_SOURCE = '<redacted:[0-9a-f]{8}~*>';

/** A whole value that is a placeholder: redacting one again keeps it (the journal holds heads already redacted). */
export const PLACEHOLDER = new RegExp(`^${PLACEHOLDER_SOURCE}$`);

/** A placeholder's length without padding: `<redacted:` + 8 hex + `>`; in bytes only a secret this long or longer is masked. */
export const PLACEHOLDER_LENGTH = 19;

/** A placeholder padded with `~` to `length` (PLACEHOLDER_LENGTH or more), so bytes masked with it keep their framing. */
export function maskedPlaceholder(p: string, length: number): string {
  return `${p.slice(0, -1)}${'~'.repeat(length - p.length)}>`;
}
