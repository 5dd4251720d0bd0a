// What bb capture and bb shadow say at close when a listener of a proxy's
// facts threw (proxy/events.ts FactBus: the bus kept the errors and traffic
// went on): one stderr line per kind of error, naming the capture it hit.
import type { ListenerErrorReport } from '../proxy/index.js';

/** The lines (each ending in a newline) for the capture labelled `label`; `missed` says what may be incomplete because of them. */
export function listenerErrorText(label: string, report: ListenerErrorReport, missed: string): string {
  return report.kinds
    .map(({ error, times }) => `bb: ${label}: a listener of the proxy's facts threw ${error.name}: ${error.message} (${times} of ${report.count} listener errors); traffic went on, ${missed}\n`)
    .join('');
}
