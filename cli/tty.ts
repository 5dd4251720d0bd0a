// Colour only on a TTY, and never when NO_COLOR is set (https://no-color.org);
// FORCE_COLOR (not "0") turns it on for pipes (bb diff | less -R).
import type { BbEnvironment } from './environment.js';

/** True when `stream` should get ANSI colours. */
export function useColor(stream: NodeJS.WriteStream, color: BbEnvironment['color']): boolean {
  if (color.no) return false;
  if (color.force) return true;
  return Boolean(stream.isTTY);
}
