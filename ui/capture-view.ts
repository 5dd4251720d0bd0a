// What `bb capture --ui` shows: the capture's views and the feeds they read.
import type { UiFeed, UiView } from './server.js';
import { exchangeFeed, exchangesFeed, type LiveSource } from './capture-feed.js';
import { framesFeed } from './frames-feed.js';

/** The views of a capture: its exchanges (assets/views/capture.js) and its WebSocket frames as lanes (frames.js). */
export const CAPTURE_VIEWS: UiView[] = [
  { name: 'capture', title: 'Exchanges' },
  { name: 'frames', title: 'Frames' },
];

/** The feeds of the capture views over these recordings. */
export function captureFeeds(sources: LiveSource[]): UiFeed[] {
  return [exchangesFeed(sources), exchangeFeed(sources), framesFeed(sources)];
}
