/** Imports point down (CONTRIBUTING.md, "Shape" 5): main -> app -> http -> handlers -> pipeline -> {routing, ledger, limits} -> {protocols, providers} -> ir; app -> export -> ledger. */
const layer = (name) => `^src/${name}/`;
const forbid = (name, from, to, comment) => ({ name, severity: 'error', comment, from: { path: from }, to: { path: to } });

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    forbid('ir-is-the-bottom', layer('ir'), '^src/(?!ir/)', 'the IR imports nothing of the app'),
    forbid('protocols-are-pure', layer('protocols'), '^src/(providers|pipeline|handlers|http|ledger|routing|app|config)/', 'protocols translate; they never reach providers or I/O'),
    forbid('providers-are-independent', layer('providers'), '^src/(protocols|pipeline|handlers|http|ledger|routing|app|config)/', 'providers never import protocols'),
    forbid('ledger-below-pipeline', layer('ledger'), '^src/(pipeline|handlers|http|protocols|providers|app)/', 'the ledger knows nothing of requests'),
    forbid('limits-below-pipeline', layer('limits'), '^src/(pipeline|handlers|http|ledger|protocols|providers|routing|app|config)/', 'rate limits know keys and numbers, nothing of requests'),
    forbid('telemetry-below-pipeline', layer('telemetry'), '^src/(pipeline|handlers|http|ledger|protocols|providers|routing|limits|app|config)/', 'telemetry makes spans and records; the seams above tell it what happened'),
    forbid('export-below-app', layer('export'), '^src/(pipeline|handlers|http|protocols|providers|routing|limits|telemetry|app|config)/', 'the usage export reads the ledger and posts to the operator; only the app starts it'),
    forbid('otel-sdk-only-in-telemetry', '^src/(?!telemetry/otel/)', 'node_modules/@opentelemetry/', 'the SDK is loaded only when an OTEL_* variable asks for it (telemetry/load-telemetry.ts)'),
    forbid('routing-below-pipeline', layer('routing'), '^src/(pipeline|handlers|http|ledger|protocols|app)/', ''),
    forbid('pipeline-below-handlers', layer('pipeline'), '^src/(handlers|http|app)/', ''),
    forbid('handlers-below-http', layer('handlers'), '^src/(http|app)/', 'handlers never touch Koa'),
    forbid('handlers-no-koa', layer('handlers'), 'node_modules/(koa|@koa)/', 'domain code never touches Koa'),
    forbid(
      'provider-folders-stay-inside',
      '^src/(?!providers/)',
      '^src/providers/(?!(transport|shared)/)[^/]+/',
      'only providers/ names a provider: the rest reads the registry (providers/registry.ts), a target\'s capabilities (providers/capabilities.ts) and what each kind declares (providers/types.ts); see also tools/check-provider-fields.mjs',
    ),
    forbid(
      'ledger-dialect-chosen-at-connection',
      '^src/(?!ledger/(connect\\.ts$|postgres/|sqlite/))',
      '^src/ledger/(postgres|sqlite)/',
      'the ledger picks its statements once, in ledger/connect.ts; everything else sees ledger/statements.ts (see also tools/check-ledger-dialect.mjs)',
    ),
    forbid('ledger-dialects-apart-pg', '^src/ledger/postgres/', '^src/ledger/sqlite/', 'one database per implementation'),
    forbid('ledger-dialects-apart-sqlite', '^src/ledger/sqlite/', '^src/ledger/postgres/', 'one database per implementation'),
    forbid('only-ledger-touches-db', '^src/(?!ledger/)', 'node_modules/(kysely|pg|@electric-sql)/', 'only the ledger touches the database'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};
