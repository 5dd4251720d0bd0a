// What normalizing one side needs, built once per side from what the run
// compiled once (rules, path rules, the ordinal table): the walks over this
// side's server homes and time window, and the compiled route keys and key
// detectors.
import type { RouteKeyConfig } from '../config-types.js';
import type { BodyParser } from './bodies.js';
import type { ProtoSchema } from '../../capture/index.js';
import type { OrdinalTable } from './ordinals.js';
import type { RuleSet } from './rules.js';
import { valueWalk, type ValueWalk } from './walk.js';
import type { PathRules } from './path-rules.js';
import type { CaptureWindow } from './timestamps.js';
import { KEY_DETECTORS } from './route-keys.js';
import { globMatcher } from '../../core/index.js';

/** What normalizing one side needs. */
export interface NormalizeContext {
  /** Compiled rules. */
  rules: RuleSet;
  /** Ordinal markers (shared by both sides). */
  table: OrdinalTable;
  /** The rules over this side's server homes (longest first) and the table, with this side's memo of normalized strings. */
  walk: ValueWalk;
  /** The same without homes, for hosts (a host never holds a path). */
  hostWalk: ValueWalk;
  /** Per-route pairing keys, each route glob compiled once. */
  routeKeys: CompiledRouteKey[];
  /** The built-in key detectors left on (route-keys.ts KEY_DETECTORS minus `pairing.disable`). */
  keyDetectors: ReadonlySet<string>;
  /** Per-path rules, compiled once per run (both sides share them). */
  pathRules: PathRules;
  /** Body parsers (editable list). */
  parsers?: readonly BodyParser[];
  /** The config's `.proto` files: gRPC messages of the methods they define decode with field names. */
  proto?: ProtoSchema;
  /** Every entry's request Host is bb's choice (a side of the run is a `bb replay`, which names its target): compared as a mask. */
  bbChoseHost?: boolean;
  /** Both sides are a `bb shadow` run's captures (PairFacts.shadowPair): an HTTP/1 request's Host is bb's even where the client sent none. */
  shadowPair?: boolean;
  /** Request headers bb set on one side's requests (`bb shadow --header`, either capture's log._bb.setHeaders), lower case: left out on both sides. */
  bbSetHeaders?: ReadonlySet<string>;
}

/** A pairing.keys rule with its route glob compiled. */
export interface CompiledRouteKey extends RouteKeyConfig {
  /** Whether the rule applies to this route (`POST /graphql`). */
  matches: (route: string) => boolean;
}

/** Hosts are normalized without home directories. */
const NO_HOMES: readonly string[] = [];

/** What a NormalizeContext is made of (`window`: the side's time window, timestamps.ts; `issued`: its bound values, diff/bind); the walks and compiled route keys are derived here, once per side. */
export function normalizeContext(parts: {
  rules: RuleSet;
  homes: string[];
  window?: CaptureWindow;
  table: OrdinalTable;
  routeKeys: readonly RouteKeyConfig[];
  /** Built-in key detectors switched off (`pairing.disable`). */
  disabledKeys?: readonly string[];
  pathRules: PathRules;
  parsers?: readonly BodyParser[];
  proto?: ProtoSchema;
  /** The side's bound values (diff/bind), marked as issued by the walk (not the host walk). */
  issued?: ReadonlySet<string>;
}): NormalizeContext {
  const { homes, window, issued, disabledKeys = [], ...rest } = parts;
  const { rules, table } = rest;
  return {
    ...rest,
    walk: valueWalk(rules, homes, table, window, rules.issued ? issued : undefined),
    hostWalk: valueWalk(rules, NO_HOMES, table, window),
    // A rule's route is written without a host (`POST /graphql`): it applies on every host.
    routeKeys: parts.routeKeys.map((k) => ({ ...k, matches: globMatcher(k.route) })),
    keyDetectors: new Set(KEY_DETECTORS.filter((d) => !disabledKeys.includes(d))),
  };
}
