// Lane labels that tell connections apart. Two Socket.IO clients both open
// `/socket.io/?EIO=4&transport=websocket&sid=…`: a label cut to the box's
// width would read the same for both. So a label is the host and path, then
// what differs among the lanes that share them: the query parameters whose
// values differ, else the first message that differs, each shown from where
// the values part ways (a shared prefix is elided, never the difference).
// Pure: from connections (wsConnections()) to labels; `bb frames --html` and
// the live UI use the same.
import type { ProtoSchema } from '../capture/index.js';
import { clip, preview } from './format.js';
import { grpcSchemaAt } from './grpc-tree.js';
import type { WsConnectionView } from './model.js';

/** A lane's label in two parts: where (host and path) and what tells it from lanes with the same where. */
export interface LaneLabel {
  /** "127.0.0.1:3000 /socket.io/". */
  where: string;
  /** "sid=Xk2…" or a message preview from where it differs; "" when nothing differs (or the lane is alone at its where). */
  differs: string;
}

/** Characters of a differing value shown. */
const SHOWN = 28;
/** Messages compared when the queries are the same. */
const MESSAGES_COMPARED = 20;

function whereOf(url: string): { where: string; query: Array<[string, string]>; search: string } {
  try {
    const u = new URL(url);
    return { where: `${u.host} ${u.pathname}`, query: [...u.searchParams.entries()], search: u.search };
  } catch {
    return { where: url, query: [], search: '' };
  }
}

/** Each value from where the values part ways: a shared prefix longer than a few characters is elided. */
function fromDifference(values: string[]): string[] {
  let common = 0;
  const first = values[0] ?? '';
  while (common < first.length && values.every((v) => v.length > common && v[common] === first[common])) common++;
  const cut = common > 6 ? common - 3 : 0;
  return values.map((v) => clip(cut > 0 ? `…${v.slice(cut)}` : v, SHOWN));
}

/** What differs among lanes that share host and path: query parameters, else the first differing message. */
function differences(group: Array<{ query: Array<[string, string]>; conn: Pick<WsConnectionView, 'url' | 'messages'> }>, proto?: ProtoSchema): string[] {
  const keys = [...new Set(group.flatMap((g) => g.query.map(([k]) => k)))];
  const valueOf = (g: (typeof group)[number], k: string): string => g.query.find(([key]) => key === k)?.[1] ?? '';
  const differing = keys.filter((k) => new Set(group.map((g) => valueOf(g, k))).size > 1);
  if (differing.length > 0) {
    const shown = differing.map((k) => fromDifference(group.map((g) => valueOf(g, k))));
    return group.map((_, i) => differing.map((k, j) => `${k}=${shown[j]![i]}`).join('&'));
  }
  for (let m = 0; m < MESSAGES_COMPARED; m++) {
    const texts = group.map((g) => {
      const msg = g.conn.messages[m];
      return msg === undefined ? '' : preview(msg, grpcSchemaAt(proto, g.conn.url));
    });
    if (texts.every((t) => t === '')) break;
    if (new Set(texts).size > 1) return fromDifference(texts).map((t, i) => (group[i]!.conn.messages[m] ? `“${t}”` : ''));
  }
  return group.map(() => '');
}

/** The labels of lanes, in the order given: host and path, and what tells each from the lanes sharing them (a gRPC message's fields named by `proto`). */
export function laneLabels(conns: ReadonlyArray<Pick<WsConnectionView, 'url' | 'messages'>>, proto?: ProtoSchema): LaneLabel[] {
  const parsed = conns.map((conn) => ({ ...whereOf(conn.url), conn }));
  const groups = new Map<string, number[]>();
  parsed.forEach((p, i) => groups.set(p.where, [...(groups.get(p.where) ?? []), i]));
  const labels: LaneLabel[] = parsed.map((p) => ({ where: p.where, differs: clip(p.search, SHOWN * 2) }));
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const diffs = differences(members.map((i) => parsed[i]!), proto);
    members.forEach((i, k) => { labels[i]!.differs = diffs[k]!; });
  }
  return labels;
}

/** A label as one line: "127.0.0.1:3000 /socket.io/ sid=Xk2…". */
export function laneLabelText(l: LaneLabel): string {
  return l.differs ? `${l.where} ${l.differs}` : l.where;
}
