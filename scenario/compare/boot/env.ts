// The hermetic environment a server under test runs in: an allow-list of
// names from bb's own environment (no ambient tokens, keys or credentials),
// a fresh HOME, TZ=UTC, then what the config adds.

/** Names from bb's environment that reach servers; LC_* too. Everything else is dropped. */
export const PASSED_ENV = ['PATH', 'LANG', 'LANGUAGE', 'TERM', 'TMPDIR', 'TMP', 'TEMP'] as const;

/** The hermetic environment: allow-listed names from `host`, HOME, TZ=UTC, then `extra` last. */
export function hermeticEnv(host: NodeJS.ProcessEnv, home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(host)) {
    if (value === undefined) continue;
    if ((PASSED_ENV as readonly string[]).includes(name) || name.startsWith('LC_')) env[name] = value;
  }
  env.HOME = home;
  env.TZ = 'UTC';
  return { ...env, ...extra };
}
