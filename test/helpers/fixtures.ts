// The HAR files other producers exported (Chrome, Firefox, Safari, Charles,
// Insomnia, mitmproxy...), kept beside the checkout in ../shared/fixtures/har/.
// A checkout without them skips the tests that read them; CI must have them:
// under CI=true a missing fixture is an error, so no CI run passes by skipping.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The shared fixtures' folder (it may be absent: read it through sharedFixture). */
export const SHARED_FIXTURES = fileURLToPath(new URL('../../../shared/fixtures/har/', import.meta.url));

/** What can be skipped: a test's context. */
export interface Skippable {
  skip(message?: string): void;
}

/**
 * The path of the shared fixture `name`, or of their folder without a name.
 * When the folder is absent it skips `t` (if given) and returns undefined
 * (the test then returns), unless process.env.CI is 'true': then it throws.
 * A folder that is there without `name` in it always throws.
 */
export function sharedFixture(t: Skippable | undefined, name?: string): string | undefined {
  return fixtureIn(SHARED_FIXTURES, t, name, process.env.CI === 'true');
}

/** sharedFixture's rule for any folder, `ci` saying whether a missing folder fails (exported for its own test). */
export function fixtureIn(folder: string, t: Skippable | undefined, name: string | undefined, ci: boolean): string | undefined {
  if (!existsSync(folder)) {
    if (ci) {
      throw new Error(`the shared HAR fixtures are not at ${folder} (../shared/fixtures/har beside the checkout): a CI run needs them, it does not skip the tests that read them`);
    }
    t?.skip(`shared HAR fixtures absent: no ${folder}`);
    return undefined;
  }
  if (name === undefined) return folder;
  const path = join(folder, name);
  if (!existsSync(path)) throw new Error(`the shared HAR fixtures at ${folder} have no ${name}`);
  return path;
}
