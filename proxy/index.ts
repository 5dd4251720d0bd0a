// proxy/: the transparent proxy and the facts it emits. Imports only core/.
export { startProxy, type ProxyOptions, type RunningProxy } from './server.js';
export { FactBus, now, type Fact, type FactListener } from './events.js';
export type * from './events.js';
export { parseUpstream, readExtraCaFile, type Upstream, type UpstreamTlsOptions } from './upstream.js';
export { isVerifyFailure, UPSTREAM_VERIFY_HINT } from './errors.js';
export type { UpgradeTap } from './upgrade.js';
export { startForwardProxy, hostMatcher, type ForwardProxyOptions, type RunningForwardProxy } from './forward.js';
export { loadOrCreateCa, createLeafFactory, type Ca, type LeafFactory } from './tls/index.js';
export { PROXY_DEFAULTS } from './options.js';
