// The proxy's defaults, once: the proxy, forward mode, the recording wiring
// (scenario/record/) and the CLI's flags (bb capture --connect-timeout,
// --grace) all read them from here.

/** Defaults of the proxy's options. */
export const PROXY_DEFAULTS = Object.freeze({
  /** How long to wait for an upstream to accept a connection, ms. */
  connectTimeoutMs: 10_000,
  /** Max silence from an upstream during an exchange, ms (0 = none). */
  upstreamTimeoutMs: 0,
  /** How long a client may take to send a whole request head, and to send its first byte once connected, ms (Node's headersTimeout; 0 = none). */
  headTimeoutMs: 60_000,
  /** How long in-flight exchanges may take to finish when the proxy closes, ms. */
  closeGraceMs: 5_000,
  /** Forward mode: how long to wait for a tunnelled client's first bytes (TLS or not), ms. */
  firstBytesTimeoutMs: 1_000,
  /** Intercepted TLS: how long a client may take to send the rest of its ClientHello once it began, ms. */
  clientHelloTimeoutMs: 10_000,
});
