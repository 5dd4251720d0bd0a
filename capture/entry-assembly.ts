// Journal records → whole exchanges, for everything that turns a journal into
// HAR entries: the writer at finalize (writer.ts) and a live follower of a
// running capture (entry-follow.ts, what `bb shadow` compares as it flows).
// One place decides which record belongs to which exchange (to-har.ts's
// addRecord says which part of it a record is, and whether it ends it), so
// an entry built live is the entry the finished HAR holds.
import type { JournalRecord } from './journal.js';
import { addRecord, emptyRecords, type ExchangeRecords } from './to-har.js';

/** What one record did: finished an exchange (its records, ready for buildEntry), began a page, or nothing yet. */
export type Assembled =
  | { kind: 'entry'; exchange: ExchangeRecords }
  | { kind: 'page'; id: string; title: string; ts: number }
  | undefined;

/** Collects the records of open exchanges and hands each one over when its end record comes. */
export class EntryAssembler {
  private readonly open = new Map<number, ExchangeRecords>();

  /** Feeds one record (after the header). */
  feed(r: JournalRecord): Assembled {
    if (r.r === 'page') return { kind: 'page', id: r.id, title: r.title, ts: r.ts };
    if (r.r === 'cerr') return { kind: 'entry', exchange: { ...emptyRecords(), end: r } };
    if (r.r === 'rsts') return { kind: 'entry', exchange: { ...emptyRecords(), burst: r } };
    if (r.r === 'start') {
      this.open.set(r.x, { ...emptyRecords(), start: r });
      return undefined;
    }
    const ex = this.open.get(r.x);
    // A record for an exchange whose start is unknown (lost to a write error): nothing to attach it to.
    if (!ex) return undefined;
    if (!addRecord(ex, r)) return undefined;
    this.open.delete(r.x);
    return { kind: 'entry', exchange: ex };
  }

  /** Exchanges that never ended, oldest first (a recovered capture keeps everything it saw). */
  unfinished(): ExchangeRecords[] {
    return [...this.open.values()].sort((a, b) => a.start!.seq - b.start!.seq);
  }
}
