// The package's public API (index.ts, what `import … from 'bb'` gives) is a
// deliberate list: publishing a name, or dropping one, changes EXPORTS below
// in the same commit. And a user can name every type the exported functions
// take and give: each parameter, each field of an options object, each
// result and each field of it is exported too (one level deep, as a user
// writes `const options: DiffOptions = { stages: (pipe: Pipe<DiffStage>) => … }`).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import ts from 'typescript';
import { join } from 'node:path';
import { exportedNames, programOf } from '../helpers/faces.js';
import { repoRoot } from '../helpers/sources.js';

/** What the package publishes, by name. */
const EXPORTS = [
  // Recording: a proxy in front of a server, writing HAR (index.ts).
  'startCapture', 'StartCaptureOptions', 'CaptureHandle', 'defaultBbHome',
  // Replaying a capture's client side against another server (index.ts).
  'replayCapture', 'ReplayCaptureOptions', 'ReplaySummary', 'ReplayPace', 'Rewritten',
  // The proxy on its own and its facts (proxy/).
  'startProxy', 'ProxyOptions', 'RunningProxy', 'AdoptOptions', 'Upstream', 'UpstreamQuery', 'UpstreamTlsOptions', 'UpgradeTap', 'LeafFactory',
  'FactBus', 'Fact', 'FactListener', 'ListenerErrorReport',
  // Capture files: write, recover, read (capture/).
  'openCapture', 'Capture', 'CaptureOptions', 'CaptureStats', 'WriteProgress', 'RedactConfig',
  'recoverCapture', 'RecoverOptions', 'RecoverResult',
  'readCapture', 'streamCapture', 'ReadCaptureOptions', 'CaptureStream', 'HarLogHeader',
  // The HAR format with bb's extensions (capture/har.ts).
  'Har', 'HarLog', 'HarPage', 'HarEntry', 'HarRequest', 'HarResponse', 'HarTimings', 'HarNameValue', 'HarCookie', 'HarPostData', 'HarContent',
  'HarWebSocketMessage', 'HarEventSourceMessage', 'HarGrpcMessage', 'BbLogExt', 'BbEntryExt', 'HarShadow', 'HarReplayOf', 'HarReplaySkip',
  'LiveCapture', 'LiveLimits', 'LiveRow', 'LiveEvent', 'LivePage', 'LiveState', 'EventFollower', 'RecentMessage',
  // Scenarios for bb compare (scenario/).
  'defineScenario', 'Scenario', 'ScenarioFn', 'ScenarioContext',
  // A live shadow run and its report (scenario/shadow/).
  'startShadow', 'StartShadowOptions', 'Shadow', 'MirrorPolicy', 'ShadowReport', 'RouteCounts', 'LiveFinding', 'Histogram', 'TargetName', 'ThreadMemory', 'mergeReports', 'RotateSpec', 'SegmentFiles',
  // Comparing two captures: options (the stage pipe, the body parsers), config, result (diff/).
  'diffCaptures', 'DiffOptions', 'Pipe', 'DiffStage', 'DiffContext', 'StagePart', 'DiffProgress', 'BodyParser', 'RawBody', 'ParsedBody',
  'loadDiffConfig', 'DiffConfig', 'NormalizeConfig', 'PairingConfig', 'KnownConfig', 'TimingOptions', 'TimingReport',
  'DiffResult', 'Finding', 'Difference', 'Pair', 'StaleKnown', 'PairView', 'EntryView', 'NoiseHidden', 'RuleHidden', 'NotReplayed',
  // The four reports (diff/report/).
  'renderText', 'TextOptions', 'renderJson', 'renderHtml', 'HtmlOptions', 'ViewLimits', 'pairViewsFrom', 'renderJunit', 'JunitOptions',
  // Errors: one class, a stable code on each (core/).
  'BbError', 'BbErrorOptions', 'isBbError', 'ERROR_CODES', 'FAILURE_CODES', 'BbCode', 'FailureCode',
];

const program = programOf(['index.ts']);
const checker = program.getTypeChecker();
const entry = checker.getSymbolAtLocation(program.getSourceFile(join(repoRoot, 'index.ts'))!)!;
const exported = checker.getExportsOfModule(entry);

/** The symbol an export stands for (aliases followed). */
const resolved = (s: ts.Symbol): ts.Symbol => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
/** Declared in bb's own sources (not Node's, not a dependency's, not the language's). */
const ours = (s: ts.Symbol): boolean => (s.declarations ?? []).some((d) => { const f = d.getSourceFile().fileName; return f.startsWith(repoRoot) && !f.includes('/node_modules/'); });

/** The named types a type mentions at its surface: through unions, arrays, Promise<…>, type arguments and function types, not into a named type's fields. */
function namesIn(type: ts.Type, out = new Set<ts.Symbol>(), seen = new Set<ts.Type>()): Set<ts.Symbol> {
  if (seen.has(type)) return out;
  seen.add(type);
  const named = type.aliasSymbol ?? (type.flags & ts.TypeFlags.Object && (type as ts.ObjectType).objectFlags & (ts.ObjectFlags.Interface | ts.ObjectFlags.Reference) ? type.getSymbol() : undefined);
  if (named && ours(named) && !(named.flags & ts.SymbolFlags.TypeParameter)) {
    out.add(named);
    for (const arg of type.aliasTypeArguments ?? []) namesIn(arg, out, seen);
    if ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) for (const arg of checker.getTypeArguments(type as ts.TypeReference)) namesIn(arg, out, seen);
    return out;
  }
  if (type.isUnionOrIntersection()) for (const t of type.types) namesIn(t, out, seen);
  else if (type.flags & ts.TypeFlags.Object) {
    if ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) for (const arg of checker.getTypeArguments(type as ts.TypeReference)) namesIn(arg, out, seen);
    for (const sig of [...type.getCallSignatures(), ...type.getConstructSignatures()]) signatureNames(sig, out, seen);
    // An object literal type (`{ leaves: LeafFactory }`) is part of the surface; a named one (Map, Buffer) is not bb's.
    if (!named) for (const p of type.getProperties()) namesIn(checker.getTypeOfSymbol(p), out, seen);
  }
  return out;
}

/** The named types of a signature's parameters and result. */
function signatureNames(sig: ts.Signature, out: Set<ts.Symbol>, seen: Set<ts.Type>): void {
  for (const p of sig.getParameters()) namesIn(checker.getTypeOfSymbol(p), out, seen);
  namesIn(sig.getReturnType(), out, seen);
}

/** What a user meets using an exported function or class: its signatures' named types, and the named types of their fields. */
function surfaceOf(value: ts.Symbol): Set<ts.Symbol> {
  const type = checker.getTypeOfSymbol(value);
  const first = new Set<ts.Symbol>();
  for (const sig of [...type.getCallSignatures(), ...type.getConstructSignatures()]) signatureNames(sig, first, new Set());
  const all = new Set(first);
  for (const s of first) {
    const declared = checker.getDeclaredTypeOfSymbol(s);
    for (const p of declared.getProperties()) namesIn(checker.getTypeOfSymbol(p), all);
  }
  return all;
}

describe('the package entry point (index.ts)', () => {
  it('exports exactly the names meant for users', () => {
    assert.deepEqual(exported.map((s) => s.getName()).sort(), [...EXPORTS].sort());
  });

  it('exports every type its functions take and give, and the fields of those', () => {
    // An exported type alias names the type it stands for (CaptureHandle is a Recording).
    const named = new Set<ts.Symbol>();
    for (const s of exported.map(resolved)) {
      named.add(s);
      const target = checker.getDeclaredTypeOfSymbol(s);
      const symbol = target.aliasSymbol ?? target.getSymbol();
      if (symbol) named.add(symbol);
    }
    const missing: string[] = [];
    for (const s of exported) {
      const value = resolved(s);
      if (!(value.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class | ts.SymbolFlags.Variable))) continue;
      for (const t of surfaceOf(value)) {
        if (named.has(t)) continue;
        const file = t.declarations![0]!.getSourceFile().fileName.slice(repoRoot.length);
        missing.push(`${s.getName()} uses ${t.getName()} (${file})`);
      }
    }
    assert.deepEqual([...new Set(missing)].sort(), []);
  });
});
