// The --json report: the whole DiffResult with a format marker (shape in
// README "bb diff").
import type { DiffResult } from '../types.js';

/** Version of the --json report's shape. */
export const JSON_REPORT_FORMAT = 1;

/** The result as one JSON document (pretty-printed, newline-terminated). */
export function renderJson(result: DiffResult): string {
  const { views: _views, timing, ...data } = result;
  // The strip charts' points are the HTML report's; JSON keeps the statistics.
  const t = timing ? { timing: { ...timing, routes: timing.routes.map(({ strip: _strip, ...r }) => r) } } : {};
  // A reordered row's move is the text report's; JSON says it in `old`/`new` ("at N: …").
  const differences = data.differences.some((d) => d.move) ? data.differences.map(({ move: _move, ...d }) => d) : data.differences;
  return `${JSON.stringify({ format: JSON_REPORT_FORMAT, tool: 'bb diff', ...data, differences, ...t }, null, 2)}\n`;
}
