// The shapes of the diff's config file (bb.config.json's `normalize`,
// `pairing` and `known` keys): types only, a leaf every diff module may import
// (config.ts validates a file into them; normalize/rules.ts compiles them).
import type { DifferenceKind, KnownValues } from './types.js';

/** A key rule: values under this key (any depth) become `replace`. */
export interface KeyRuleConfig {
  /** Exact key, case-insensitive. */
  key?: string;
  /** Or a regular expression the key must match. */
  pattern?: string;
  /** Placeholder written instead of the value, e.g. "<SHA>". */
  replace: string;
}

/** A value pattern: matches inside strings and object keys. */
export interface PatternConfig {
  /** Rule name (for reports and `disable`). */
  name?: string;
  /** JavaScript regular expression source. */
  regex: string;
  /** Regex flags besides g (e.g. "i"). */
  flags?: string;
  /** Fixed replacement (may use $1...); default "<MASKED>". */
  replace?: string;
  /** Or an ordinal class: each distinct match becomes <CLASS:n>, numbered by first appearance. */
  ordinal?: string;
}

/** A per-path rule: mask (or drop) one field in the entries it selects. */
export interface PathRuleConfig {
  /** Glob over entry ids (`*` any run of characters); default all entries. */
  where?: string;
  /** Field path suffix (segment boundary, `*` one segment, `[]` any index). */
  path: string;
  /** Placeholder; default "<MASKED>" (with `pattern`: written for each match, may use $1…). */
  replace?: string;
  /** Mask only what this regex matches inside the value (a string, or a number's text); a value it does not match is compared as it is. Without it the whole field is masked. */
  pattern?: string;
  /** With `pattern`: mask only values of this JSON type (`bb noise` writes the type of the values it saw, so a pattern made from numbers does not mask a string of digits, nor one made from strings a number). */
  type?: 'string' | 'number' | 'boolean';
  /** Drop the field instead of masking it. */
  ignore?: boolean;
}

/** The `normalize` section. */
export interface NormalizeConfig {
  /** Built-in rule names to switch off (see README "bb diff"). */
  disable?: string[];
  /** Extra key rules. */
  keys?: KeyRuleConfig[];
  /** Extra value patterns, applied before the built-in ordinals. */
  patterns?: PatternConfig[];
  /** Extra header names whose values are masked. */
  headers?: string[];
  /** Keys never normalized: they must match verbatim. Added to the built-in list. */
  keep?: string[];
  /** Per-path rules. */
  paths?: PathRuleConfig[];
  /** The server's home directory (both sides), when the captures do not carry log._bb.serverHome. */
  serverHome?: string | string[];
  /** Field paths (suffix selectors, `[]` any index) of arrays compared as multisets: order never reported. */
  unorderedArrays?: string[];
  /** `.proto` files whose services name gRPC messages' fields (absolute once validated; the file gives them relative to itself). */
  proto?: string[];
}

/** Route-level pairing key: which same-route calls are the same call. */
export interface RouteKeyConfig {
  /** Glob over "METHOD path", e.g. "POST /graphql". */
  route: string;
  /** "graphql" (operation name, else the query's hash), "jsonrpc" (method), "body:<dotted field>", "body-hash", "query:<parameter>" or "header:<name>". */
  by: string;
}

/** The `pairing` section. */
export interface PairingConfig {
  /** Per-route keys (they take precedence over the built-in detectors). */
  keys?: RouteKeyConfig[];
  /** Built-in key detectors switched off: "graphql", "jsonrpc", "engine-io" (diff/normalize/route-keys.ts). */
  disable?: string[];
  /** Globs over "METHOD path": such requests pair as a multiset within their page (concurrent fetches). */
  unordered?: string[];
  /**
   * WebSocket message order compared per direction ("direction", the
   * default: what the client sent, in order, and what the server sent, in
   * order) or as one sequence ("total": how the two directions interleave
   * counts too, which timing decides when a client sends without waiting).
   */
  wsOrder?: 'direction' | 'total';
  /** Identity keys of array items by array path (`{ "path": "response.body.items", "key": "sku" }`); default keys id, _id, uuid, key. */
  arrayKeys?: Array<{ path: string; key: string }>;
}

/** A ratified difference (issue 7); the values it recorded, when `bb known add` wrote it (issue 33). */
export interface KnownConfig extends KnownValues {
  /** Glob over entry ids, or several (any of them matches: a finding's routes). */
  where: string | string[];
  /** Field path suffix. */
  path: string;
  /** Only this kind of difference. */
  kind?: DifferenceKind;
  /** Why it is accepted (required). */
  reason: string;
  /** Milestone or version that introduced it. */
  since?: string;
  /** Issue/ticket URL. */
  tracking?: string;
}

/** The whole diff config, validated. */
export interface DiffConfig {
  normalize: NormalizeConfig;
  pairing: PairingConfig;
  known: KnownConfig[];
}

