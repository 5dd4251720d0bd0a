// One thread's memory, for the shadow benchmark's per-thread figures
// (bench/shadow.ts): the comparison worker sends its own with each report,
// since a worker's heap is not visible from the main thread.

/** One thread's memory (process.memoryUsage() without the process-wide rss), bytes. */
export interface ThreadMemory {
  /** V8 heap in use. */
  heapUsed: number;
  /** V8 heap reserved. */
  heapTotal: number;
  /** Memory of C++ objects bound to JS ones, Buffers included. */
  external: number;
  /** The most heap in use at any call of threadMemory in this thread so far. */
  peakHeapUsed: number;
}

let peak = 0;

/** This thread's memory now (and the peak over every call so far: call it often to catch one). */
export function threadMemory(): ThreadMemory {
  const m = process.memoryUsage();
  peak = Math.max(peak, m.heapUsed);
  return { heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, peakHeapUsed: peak };
}
