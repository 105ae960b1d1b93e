import { afterEach, describe, expect, it } from 'vitest';
import { checkScript } from './check-script-harness.js';

const { tree, check, cleanup } = checkScript('check-test-layout.mjs');
afterEach(cleanup);

const good = {
  'src/ledger/price.ts': 'export const price = 1;\n',
  'src/ledger/price.test.ts': "import { it } from 'vitest';\nimport { price } from './price.js';\nimport { baseRequest } from '../../test/support/ir-fixtures.js';\n",
  'test/support/ir-fixtures.ts': 'export const baseRequest = {};\n',
  'test/support/gateway.ts': "import http from 'node:http';\nexport const startGateway = http;\n",
  'test/integration/chat.test.ts': "import { startGateway } from '../support/gateway.js';\n",
  'test/integration/helper.ts': "export { startGateway } from '../support/gateway.js';\n",
  'test/integration/through-helper.test.ts': "import { startGateway } from './helper.js';\n",
  'test/ledger/persistence.test.ts': "import { openLedger } from '../../src/ledger/index.js';\n",
  'src/ledger/index.ts': 'export const openLedger = 1;\n',
  'test/package/policy.test.ts': "import { readFileSync } from 'node:fs';\n",
};

describe('the test layout check', () => {
  it('passes unit tests beside their source and suites under test/ that reach the gateway or a database, directly or through a helper', () => {
    const result = check(tree(good));
    expect(result).toMatchObject({ ok: true });
  });

  it('refuses a pure unit test under test/, naming it', () => {
    const result = check(tree({ ...good, 'test/providers/decode-error.test.ts': "import { price } from '../../src/ledger/price.js';\n" }));
    expect(result.ok).toBe(false);
    expect(result.output).toContain('test/providers/decode-error.test.ts: runs no gateway');
  });

  it('refuses a test helper in src/, by its name and by what it imports', () => {
    const result = check(tree({ ...good, 'src/ledger/fixtures.test-helper.ts': "import { REFERENCE_DIR } from '../../tools/reference.js';\n", 'src/ledger/builders.ts': "import { expect } from 'vitest';\n" }));
    expect(result.ok).toBe(false);
    expect(result.output).toContain('src/ledger/fixtures.test-helper.ts: a test helper in src/');
    expect(result.output).toContain('src/ledger/fixtures.test-helper.ts: imports tools/reference.js');
    expect(result.output).toContain('src/ledger/builders.ts: imports vitest');
  });

  it('refuses a unit test in src/ that starts the gateway, even through a helper', () => {
    const result = check(tree({ ...good, 'src/ledger/price.test.ts': "import { startGateway } from '../../test/integration/helper.js';\n" }));
    expect(result.ok).toBe(false);
    expect(result.output).toContain('src/ledger/price.test.ts: a unit test that starts the gateway or a fake upstream (test/support/gateway.ts)');
  });
});
