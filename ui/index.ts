// ui/'s face: the live web view (`bb capture --ui`), a server of one page and
// feeds of typed events that commands register views and feeds with.
// Another command's view plugs in through startUi's feeds and views; its types
// (UiOptions, UiFeed, UiView, UiEvent in server.ts) join this face when a
// folder outside ui/ first imports them (faces export only what is used).
export { startUi, checkUiAddress, type UiServer } from './server.js';
export { captureFeeds, CAPTURE_VIEWS } from './capture-view.js';
