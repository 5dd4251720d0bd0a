// ui/'s face: the live web view (`bb capture --ui`), a server of one page and
// feeds of typed events that commands register views and feeds with.
// Another command's view plugs in through startUi's feeds, views and actions
// (`bb shadow --ui`: scenario/shadow/shadow-ui.ts); UiOptions, UiView and UiEvent join
// this face when a folder outside ui/ first imports them (faces export only what is used).
export { startUi, checkUiAddress, type UiServer, type UiFeed, type UiAction } from './server.js';
export { captureFeeds, CAPTURE_VIEWS } from './capture-view.js';
