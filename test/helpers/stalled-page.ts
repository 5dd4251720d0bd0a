// A page of the live view that stops reading: a raw socket that asks for a
// feed, reads the answer's head and then nothing (socket.pause(): the kernel's
// receive buffer fills, then TCP's window closes and bb's writes queue up).
// Node cannot shrink SO_RCVBUF; the receive buffer stays at its initial size
// (tcp_rmem's default, 128 KiB here) because it only grows as the reader reads.
import net from 'node:net';

/** A subscriber of a feed that reads on demand. */
export interface StalledPage {
  /** Starts reading again; every byte read from then on lands in text(). */
  resume(): void;
  /** What was read since the head (after resume(): everything). */
  text(): string;
  /** Waits until text() matches `pattern` (up to `ms`). */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  /** Closes the socket. */
  close(): void;
}

/** Opens `path` (e.g. /feed/exchanges) on the live view at `url` and stops reading once the head came. */
export async function openStalledPage(url: string, path: string): Promise<StalledPage> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  let text = '';
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`));
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (!text.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      resolve();
    };
    socket.on('data', onData);
  });
  return {
    resume() {
      socket.on('data', (chunk: Buffer) => void (text += chunk.toString('utf8')));
      socket.resume();
    },
    text: () => text,
    async waitFor(pattern, ms = 30_000) {
      for (const end = Date.now() + ms; !pattern.test(text); ) {
        if (Date.now() > end) throw new Error(`the page never read ${pattern}; it has ${text.length} characters, ending ${JSON.stringify(text.slice(-300))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => socket.destroy(),
  };
}
