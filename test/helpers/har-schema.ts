// Validates a HAR against the HAR 1.2 JSON Schema (har-schema, draft-06,
// through ajv) plus the checks that schema cannot express: its timings use
// "min": -1, which is not a JSON Schema keyword, so send/wait/receive ≥ 0 or
// exactly -1 is checked here, as are a few bb contract rules.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url);
// ajv and har-schema are CommonJS.
const AjvModule = require('ajv') as { default: new (opts: Record<string, unknown>) => AjvLike };
const draft06 = require('ajv/dist/refs/json-schema-draft-06.json') as object;
const harSchemas = require('har-schema') as Record<string, { $id: string }>;

interface AjvLike {
  addMetaSchema(schema: object): void;
  addSchema(schema: object): void;
  getSchema(id: string): ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> | null };
}

let validator: ReturnType<AjvLike['getSchema']> | undefined;

function harValidator() {
  if (validator) return validator;
  // strict: false tolerates har-schema's non-keywords ("min", "optional"); formats are checked by pattern instead.
  const ajv = new AjvModule.default({ strict: false, allErrors: true, validateFormats: false });
  ajv.addMetaSchema(draft06);
  for (const schema of Object.values(harSchemas)) ajv.addSchema(schema);
  validator = ajv.getSchema('har.json#');
  return validator;
}

/** Returns the problems found in a HAR (empty when valid). */
export function harProblems(har: unknown): string[] {
  const validate = harValidator();
  const problems: string[] = [];
  if (!validate(har)) {
    for (const e of validate.errors ?? []) problems.push(`${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  }
  const log = (har as { log?: { entries?: unknown[] } }).log;
  (log?.entries ?? []).forEach((raw, i) => {
    const e = raw as { timings?: Record<string, unknown>; time?: unknown };
    for (const phase of ['blocked', 'dns', 'connect', 'send', 'wait', 'receive', 'ssl']) {
      const v = e.timings?.[phase];
      if (v === undefined && (phase === 'send' || phase === 'wait' || phase === 'receive')) {
        problems.push(`/log/entries/${i}/timings/${phase} is missing`);
      } else if (v !== undefined && !(typeof v === 'number' && (v >= 0 || v === -1))) {
        problems.push(`/log/entries/${i}/timings/${phase} must be ≥ 0 or -1, got ${String(v)}`);
      }
    }
    if (typeof e.time !== 'number' || e.time < 0) problems.push(`/log/entries/${i}/time must be ≥ 0`);
  });
  return problems;
}

/** Asserts that a HAR is valid HAR 1.2 (schema + timings rules). */
export function assertValidHar(har: unknown): void {
  const problems = harProblems(har);
  assert.deepEqual(problems, [], `HAR is invalid:\n  ${problems.join('\n  ')}`);
}
