// The table of bb's codes. A code names one kind of failure for good: people
// grep for it, tests assert it, captures record it. Errors bb raises carry one
// of the first group (the CLI maps each to an exit status, 2 "could not run"
// unless cli/exit.ts says otherwise); the second group is data: why an
// exchange failed, written into a capture (`_bb.error.code`, X-BB-Error) next
// to Node's own codes (ECONNREFUSED, HPE_*, WS_ERR_*).

/** Codes of errors bb raises, each with what it means. */
export const ERROR_CODES = {
  // Flags and arguments (cli/)
  BB_USAGE: 'a command, flag or argument is missing, unknown or contradicts another',
  BB_UNKNOWN_COMMAND: 'no bb command has that name',
  BB_FLAG_REPEATED: 'a flag that takes one value was given more than once',
  BB_BAD_NUMBER: 'a flag that takes a number got something else',
  BB_BAD_SIZE: 'a flag that takes a size (16MiB, 512KiB) got something else',
  BB_BAD_LISTEN: '--listen (or --admin) is not host:port or a port',
  BB_BAD_TARGET: '--target is not an http(s) URL or its label is not a file name',
  BB_NO_TARGET: 'bb capture was given no --target',
  BB_BAD_OUT: '--out is not what the command needs (a folder for several targets)',
  BB_BAD_REDACT: '--redact and --no-redact contradict each other',
  BB_BAD_HOSTS: '--hosts holds something that is not a host glob',
  BB_BAD_CA: 'a certificate file given by a flag cannot be read',
  BB_BAD_ENTRY: '--entry is not an exchange number as bb show lists it',
  BB_NO_ENTRY: 'the capture has no exchange of that number',
  BB_BAD_STATUS: '--status is not a list of codes or classes (404, 4xx)',
  BB_BAD_GREP: '--grep is not a valid regular expression',
  BB_BAD_OPCODE: '--opcode names no WebSocket opcode',
  BB_BAD_TREES: '--trees is not two of old/new',
  BB_FRAMES_HTML_CONFLICT: 'bb frames --html was combined with --json or --follow',
  BB_REPORT_STDOUT_TWICE: 'more than one report was sent to stdout',
  BB_KNOWN_NO_REASON: 'bb known add was given no --reason',
  BB_FILE_UNREADABLE: 'a file named on the command line cannot be read',
  BB_OUT_EXISTS: 'the output file exists and --force was not given',
  BB_OUT_UNWRITABLE: 'an output file cannot be written',
  BB_REPORT_UNWRITABLE: 'a report file cannot be written',
  BB_REPORT_INVALID: 'a file given as a bb diff --json report is not one',
  BB_DIFF_ID_UNKNOWN: 'a difference id given to bb known add is not in the report',
  BB_NO_CAPTURE: 'there is no capture (running or finished) at that path',
  BB_ADMIN_NOT_LOOPBACK: '--admin asks for an address other than loopback',
  BB_ADMIN_LISTEN: 'the admin endpoint cannot listen on its address',
  BB_UI_NOT_LOOPBACK: '--ui asks for an address other than loopback',
  BB_UI_LISTEN: 'the live view (--ui) cannot listen on its address',
  // Proxy start-up (proxy/)
  BB_PROXY_CONFIG: 'proxy options are invalid',
  BB_LISTEN: 'the proxy cannot listen on its address',
  BB_FORWARD_NO_CA: "forward mode was started without bb's CA",
  BB_FORWARD_REMOTE: 'forward mode was asked to listen off loopback without --allow-remote',
  BB_CA_UNREADABLE: "bb's CA files cannot be read",
  BB_CA_CORRUPT: "bb's CA certificate or key does not parse",
  BB_CA_MISMATCH: "bb's CA key does not belong to its certificate",
  BB_CA_EXPIRED: "bb's CA certificate has expired",
  BB_CA_INCOMPLETE: "bb's CA folder holds a key without a certificate (or the reverse)",
  // Recording (capture/)
  BB_CAPTURE_OPTIONS: 'openCapture was called with missing or invalid options',
  BB_CAPTURE_OPEN: "the capture's journal cannot be created",
  BB_CAPTURE_FINALIZE: 'the journal could not be turned into the HAR file',
  BB_DIFF_OUT_OF_MEMORY: 'bb diff reached Node\'s heap limit reading captures this large',
  BB_REDACT_KEY: 'the redaction key is missing or unreadable',
  BB_JOURNAL_LEFTOVER: 'a journal from an earlier run is in the way: recover or remove it',
  BB_JOURNAL_LIVE: 'the journal is being written by a capture that is still running',
  BB_JOURNAL_MISSING: 'bb recover found no journal',
  BB_JOURNAL_INVALID: 'a journal cannot be read as one',
  BB_RECOVER_FAILED: 'bb recover could not write the HAR file',
  // Reading captures (capture/reader)
  BB_CAPTURE_UNREADABLE: 'a capture file cannot be opened or read',
  BB_CAPTURE_INVALID: 'a capture file is not HAR bb can use (names the JSON path)',
  BB_CAPTURE_INCOMPLETE: 'a capture was recovered after a crash and --allow-incomplete was not given',
  BB_CAPTURE_EMPTY: 'a capture holds no exchanges',
  // Diff configuration (diff/)
  BB_CONFIG_INVALID: 'a config file (bb.config.json, a scenario config) is invalid; the message names the entry',
  BB_CONFIG_MISSING: 'a config file named on the command line does not exist',
  // Scenarios and servers (scenario/)
  BB_SCENARIO_MISSING: 'the scenario module does not exist',
  BB_SCENARIO_LOAD: 'the scenario module could not be loaded',
  BB_SCENARIO_SHAPE: 'the scenario module does not export a scenario',
  BB_SCENARIO_FAILED: 'the scenario threw outside a step',
  BB_STEP_FAILED: 'a scenario step threw',
  BB_SERVER_SPAWN: 'a server command could not be started',
  BB_SERVER_EXITED: 'a server exited before it was ready',
  BB_SERVER_NOT_READY: 'a server was not ready in time',
  BB_SERVER_NO_PORT: "a server's ready signal named no port",
  BB_SERVER_BAD_READY: 'a server printed a READY line that is not JSON',
  BB_SERVER_DIED: 'a server exited while the scenario ran',
  BB_GIT_BAD_REF: 'a git ref given as a server does not exist',
  BB_GIT_FAILED: 'git failed while making a worktree',
  BB_INSTALL_FAILED: "installing a worktree's dependencies failed",
  BB_INTERRUPTED: 'the run was interrupted (Ctrl-C)',
  // Replaying a capture (scenario/replay*)
  BB_REPLAY_NO_ENTRIES: 'the capture given to bb replay holds no request it can replay',
  BB_REPLAY_NO_REQUEST: 'an entry of the capture given to bb replay has no request',
  BB_REPLAY_TRUNCATED: 'a request body was truncated at capture, so it cannot be re-sent',
  BB_REPLAY_SECRET: 'a request carries a redacted client secret that --header or replay.values must supply',
  BB_REPLAY_TARGET_DOWN: 'the replay target does not accept connections',
  BB_REPLAY_TARGET_UNTRUSTED: 'the https replay target has a certificate bb cannot verify (--upstream-ca FILE trusts its CA)',
  BB_BAD_PACE: '--pace is not asap, original or a factor like 2x',
  BB_BAD_WS_MODE: '--ws is not wait or timing',
  BB_BAD_HEADER: "--header is not 'Name: value'",
  // bb shadow (scenario/shadow/)
  BB_TARGET_DOWN: 'a bb shadow target (primary, candidate or secondary) does not accept connections at start',
  BB_TARGET_UNTRUSTED: 'an https bb shadow target has a certificate bb cannot verify at start (--upstream-ca FILE trusts its CA)',
  BB_SHADOW_COMPARE: "bb shadow's live comparison failed (the captures are still written)",
  BB_BAD_SAMPLE: '--sample is not a share between 0 and 1 (or a percentage), or --sample-by is not header:NAME or cookie:NAME',
  BB_BAD_MIRROR: '--mirror is not safe, all or routes like "POST /search"',
  BB_BAD_UNTIL: '--until is not a count of requests or a duration (30s, 10m, 1h)',
  BB_BAD_FAIL_ON: '--fail-on is not a rate between 0 and 1 (or a percentage)',
  BB_BAD_SHADOW_REPORT: 'a file given to bb shadow --merge is not a bb shadow JSON report',
  BB_BAD_ROTATE: '--rotate is not a size (64MB) or a duration (10m) above 0',
  BB_ROTATE_LIVE: 'a rotating capture was asked for one live view (--ui with --rotate)',
} as const;

/** Codes bb writes into captures when an exchange failed (data, not thrown at the user). */
export const FAILURE_CODES = {
  BB_CONNECT_TIMEOUT: 'the upstream did not accept the connection in time',
  BB_UPSTREAM_TIMEOUT: 'the upstream did not answer in time',
  BB_UPSTREAM_CLOSED: 'the upstream closed the connection before answering',
  BB_UPSTREAM_HTTP2: 'the upstream speaks HTTP/2 only',
  BB_UPSTREAM_ERROR: 'the upstream failed without a code of its own',
  BB_BAD_CONNECT: 'a forward-mode CONNECT named no usable host:port',
  BB_NO_LEAF: 'bb could not make a certificate for the host a client asked for',
  BB_CLIENT_TLS: "the client's TLS handshake with bb failed without a code of its own",
  BB_UPSTREAM_NOT_H2: 'the client spoke h2 and the upstream does not',
  // h2 connection errors (RFC 9113 section 7), recorded for the side that committed them
  BB_H2_PROTOCOL_ERROR: 'an h2 peer broke the protocol; bb closed the connection with GOAWAY(PROTOCOL_ERROR)',
  BB_H2_FRAME_SIZE_ERROR: 'an h2 peer sent a frame larger than allowed; bb closed the connection',
  BB_H2_COMPRESSION_ERROR: 'an h2 peer sent a header block HPACK cannot decode; bb closed the connection',
  BB_H2_ENHANCE_YOUR_CALM: 'an h2 peer sent far more header data than it may (a bomb or flood); bb closed the connection',
  BB_H2_FLOW_CONTROL_ERROR: 'an h2 peer broke flow control; bb closed the connection',
  BB_H2_GOAWAY: 'an h2 peer ended the connection with an error code',
} as const;

/** A code an error bb raises carries. */
export type BbCode = keyof typeof ERROR_CODES;

/** A code bb records for a failed exchange. */
export type FailureCode = keyof typeof FAILURE_CODES;
