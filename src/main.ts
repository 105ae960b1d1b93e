/**
 * The `switchyard` command: the gateway server and the admin CLI over the same ledger code.
 *
 *   switchyard serve [--demo]                      start the gateway (HOST, PORT, SWITCHYARD_CONFIG, ...)
 *   switchyard accounts create <name> [--balance N]
 *   switchyard accounts list [--limit N] [--before <account_id>]
 *   switchyard accounts show <account_id>
 *   switchyard keys create <account_id> [--name N] [--rpm N] [--tpm N] [--models a,b] [--budget day=N,...] [--time-zone Z] [--expires T]
 *   switchyard keys update <key_id> [--name N] [--rpm N|none] [--tpm N|none] [--models a,b|all] [--budget day=N,...|none] [--time-zone Z] [--expires T|never]
 *   switchyard keys revoke <key_id>
 *   switchyard keys list [--account <account_id>]
 *   switchyard users list [--account <account_id>] [--after <user_id>]
 *   switchyard users disable|enable <user_id>
 *   switchyard users budgets <user_id>
 *   switchyard groups budgets <group>
 *   switchyard audit [--limit N] [--before <id>]
 *   switchyard credit <account_id> <amount> --reason <text>
 *   switchyard balance <account_id>
 *   switchyard ledger <account_id> [--limit N] [--before <entry id>]
 *   switchyard usage <account_id> [--limit N] [--before <request_id>] [--end-user U] [--session S]
 *   switchyard spend [--account <account_id>] [--from T] [--to T] [--group-by day|model|key|user|session]
 *   switchyard prices [--config <file>] [--json]      every model's effective prices and their sources
 *
 * Admin commands print what the admin API answers (the same JSON shapes) on stdout.
 */
import { parseArgs } from 'node:util';

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      demo: { type: 'boolean', default: false },
      balance: { type: 'string' },
      name: { type: 'string' },
      account: { type: 'string' },
      reason: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      models: { type: 'string' },
      limit: { type: 'string' },
      before: { type: 'string' },
      after: { type: 'string' },
      'end-user': { type: 'string' },
      session: { type: 'string' },
      budget: { type: 'string' },
      'time-zone': { type: 'string' },
      expires: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'group-by': { type: 'string' },
      config: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command = 'serve', ...rest] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (command === 'serve') {
    // Imported on demand: the admin CLI starts in half the time without the server's modules.
    const { serve } = await import('./app/serve.js');
    await serve({ demo: values.demo ?? false });
    return -1; // keeps running
  }
  if (command === 'prices') {
    // No database: the catalog alone (SWITCHYARD_CONFIG, or --config), keys not needed.
    const { printPrices } = await import('./app/prices-cli.js');
    return printPrices(values.config ?? process.env.SWITCHYARD_CONFIG, values.json ?? false);
  }
  // A data directory a running gateway holds is refused before the database modules load.
  const { embeddedDirFromEnv, refuseDataDirInUse } = await import('./ledger/data-dir.js');
  const dataDir = embeddedDirFromEnv();
  if (dataDir) await refuseDataDirInUse(dataDir);
  const { runAdminCommand } = await import('./app/admin-cli.js');
  return runAdminCommand(command, rest, values);
}

const HELP = `switchyard: an LLM gateway speaking OpenAI chat, Anthropic messages and OpenAI Responses.

  switchyard serve [--demo]
  switchyard accounts create <name> [--balance <nanodollars>]
  switchyard accounts list [--limit <n>] [--before <account_id>]
  switchyard accounts show <account_id>
  switchyard keys create <account_id> [--name <name>] [--rpm <requests/min>] [--tpm <tokens/min>] [--models <id,id>]
                         [--budget <period>=<nanodollars>,...] [--time-zone <IANA name>] [--expires <RFC 3339>]
  switchyard keys update <key_id> [--name <name>] [--rpm <requests/min>|none] [--tpm <tokens/min>|none] [--models <id,id>|all]
                         [--budget <period>=<nanodollars>,...|none] [--time-zone <IANA name>] [--expires <RFC 3339>|never]
  switchyard keys revoke <key_id>
  switchyard keys list [--account <account_id>]
  switchyard users list [--account <account_id>] [--after <user_id>]   users signed in through the identity provider
  switchyard users disable|enable <user_id>
  switchyard users budgets <user_id>                                    the user's budgets and their groups', with their spend
  switchyard groups budgets <group>                                     a group's budgets (oidc.groups in SWITCHYARD_CONFIG), with their spend
  switchyard audit [--limit <n>] [--before <id>]                        the audit log, newest first
  switchyard credit <account_id> <amount> --reason <text>
  switchyard balance <account_id>
  switchyard ledger <account_id> [--limit <n>] [--before <entry id>]    journal entries, newest first
  switchyard usage <account_id> [--limit <n>] [--before <request_id>] [--end-user <id>] [--session <id>]
                                                                        usage records, newest first
  switchyard spend [--account <account_id>] [--from <RFC 3339>] [--to <RFC 3339>] [--group-by day|model|key|user|session]
                                                                        usage summed per group (last 30 days)
  switchyard prices [--config <file>] [--json]                          every catalog model's effective prices, where each
                                                                        came from, and configured rates that differ from the price table

Admin commands print the admin API's JSON (snake_case, amounts as numbers of nanodollars); lists
come a page at a time (100 by default, at most 1000): pass last_id as --before for the next page.
Budget periods: day, week (from Monday), month, lifetime, in --time-zone (UTC by default).
--models is checked against the catalog the gateway would load (SWITCHYARD_CONFIG), named on stderr.

Environment: HOST (127.0.0.1), PORT (8080), SWITCHYARD_CONFIG (catalog YAML; built-in local models
when unset), DATABASE_URL (PostgreSQL, or sqlite:PATH; when unset, an embedded database in
SWITCHYARD_DATA_DIR, default ./data), SWITCHYARD_EMBEDDED_DB (that embedded database: sqlite, the
default, or pglite; a directory already holding one keeps it), SWITCHYARD_DB_SCHEMA (PostgreSQL schema), SWITCHYARD_ADMIN_KEY (enables the admin API),
SWITCHYARD_HOLD_TTL_MS (orphaned holds expire after it, default 15 min), SWITCHYARD_REAPER_INTERVAL_MS
(how often expired holds are released, default 30 s), SWITCHYARD_SEND_TIMEOUT_MS (a streaming
client that reads nothing for this long is cut off, default 60 s), REDIS_URL (key rate limits shared by every
instance, and key changes announced to them; this process's memory when unset), LOG_LEVEL. Money is integer nanodollars (1e-9 USD).
`;

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    process.stderr.write(`switchyard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
