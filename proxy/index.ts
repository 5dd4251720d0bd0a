// proxy/: the transparent proxy and the facts it emits. Imports only core/.
export { startProxy, type ProxyOptions, type RunningProxy, type AdoptOptions, type UpstreamQuery } from './server.js';
export { FactBus, type Fact, type FactListener, type ListenerErrorReport, type FailureInfo, type RawHeaders, type SyntheticResponse } from './events.js';
export { probeUpstream, readExtraCaFile, type Upstream, type UpstreamTlsOptions } from './upstream.js';
export { isVerifyFailure, UPSTREAM_VERIFY_HINT } from './errors.js';
export type { UpgradeTap } from './upgrade.js';
export { startForwardProxy } from './forward.js';
export { loadOrCreateCa, createLeafFactory, type Ca, type LeafFactory } from './tls/index.js';
export { PROXY_DEFAULTS } from './options.js';
export { Http1Parser } from './http1/parser.js';
export type { Http1Head } from './http1/head.js';
