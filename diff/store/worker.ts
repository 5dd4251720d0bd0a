// The worker thread of one bounded-store side (store/side-work.ts): opens
// the side from workerData, answers 0 with its header, then serves
// summarize / bound / finish / load / close requests by id. Errors go back as data
// (store/worker-client.ts rebuilds them).
import { parentPort, workerData } from 'node:worker_threads';
import { SideWork, type SideSpec } from './side-work.js';
import { errorData, type Reply, type Request } from './worker-client.js';
import { packSummaries } from './pack.js';

const port = parentPort!;
const post = (reply: Reply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);

let work: SideWork | undefined;
try {
  work = await SideWork.open(workerData as SideSpec);
  post({ id: 0, result: work.header });
} catch (err) {
  post({ id: 0, error: errorData(err) });
}

port.on('message', async (req: Request) => {
  try {
    if (!work) throw new Error('bb diff: the side did not open');
    if (req.op === 'summarize') {
      post({ id: req.id, result: await work.summarize(new Map(req.labels), (done) => post({ id: req.id, progress: done }), req.pair) });
    } else if (req.op === 'bound') {
      post({ id: req.id, result: await work.bound(req.pair, req.ids) });
    } else if (req.op === 'finish') {
      const out = await work.finish(req.hosts);
      // Packed before the transfer: the summaries' marks are views into the markers' buffer.
      const list = packSummaries(out.summaries, out.kept);
      // The chunks own their ArrayBuffers: handed over, not copied.
      const buffers = out.chunks.map((c) => c.buffer as ArrayBuffer);
      post({ id: req.id, result: { list, chunks: buffers, markers: out.markers, shapes: out.shapes, keyed: out.keyed, issued: out.issued } }, [...buffers, out.markers.buffer as ArrayBuffer, list.numbers.buffer as ArrayBuffer]);
    } else if (req.op === 'load') {
      post({ id: req.id, result: await work.load(req.index) });
    } else {
      await work.close();
      post({ id: req.id, result: null });
      port.close();
    }
  } catch (err) {
    post({ id: req.id, error: errorData(err) });
  }
});
