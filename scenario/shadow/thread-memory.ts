// One thread's memory, for the shadow benchmark's per-thread figures
// (bench/shadow.ts): the comparison worker sends its own with each report,
// since a worker's heap is not visible from the main thread. V8's own heap
// statistics, not process.memoryUsage(): that also reads the process's RSS
// from /proc, a system call each of the worker's ten samples a second.
import { getHeapStatistics } from 'node:v8';

/** One thread's memory (process.memoryUsage()'s figures but the process-wide rss), bytes. */
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
  const h = getHeapStatistics();
  peak = Math.max(peak, h.used_heap_size);
  return { heapUsed: h.used_heap_size, heapTotal: h.total_heap_size, external: h.external_memory, peakHeapUsed: peak };
}
