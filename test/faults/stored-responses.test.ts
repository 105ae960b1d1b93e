/**
 * Responses whose storing fails (the database lost the table, or is away) on every database: the
 * answer still goes out, and says it was not stored (`store: false` and a warning) rather than
 * handing out an id that a later `previous_response_id` or GET cannot find.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { splitSse } from '../integration/cross-support.js';

for (const target of dbTargets) {
  describe(`a Responses answer whose storing failed (${target.name})`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway({ target });
    });
    afterAll(async () => gw?.close());

    const create = (body: Record<string, unknown>) =>
      fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-haiku', input: 'Hello', max_output_tokens: 16, ...body }),
      });
    const get = (id: string) => fetch(`${gw.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${gw.key}` } });

    it('says store false with a warning, streamed or not, and stores again once the table is back', async () => {
      await sql`ALTER TABLE stored_responses RENAME TO stored_responses_away`.execute(gw.ledger.db);
      let whole: any;
      let wholeWarnings: string | null;
      let final: any;
      try {
        const res = await create({});
        expect(res.status).toBe(200);
        wholeWarnings = res.headers.get('x-switchyard-warnings');
        whole = await res.json();
        const streamed = await create({ stream: true });
        expect(streamed.status).toBe(200);
        const frames = splitSse(await streamed.text());
        final = frames.find((f) => f.event === 'response.completed' || f.event === 'response.incomplete')?.data.response;
        if (!final) throw new Error(`no final event: ${frames.map((f) => f.event).join(', ')}`);
      } finally {
        await sql`ALTER TABLE stored_responses_away RENAME TO stored_responses`.execute(gw.ledger.db);
      }
      console.log(`storing failed: ${JSON.stringify({ store: whole.store, warnings: whole.switchyard.warnings, header: wholeWarnings })}`);
      for (const response of [whole, final]) {
        expect(['completed', 'incomplete']).toContain(response.status);
        expect(response.store).toBe(false);
        expect(response.switchyard.warnings.join(' ')).toMatch(/could not be stored/);
        // What it says holds: the id is not found, as any store:false response's.
        expect((await get(response.id)).status).toBe(404);
      }
      expect(wholeWarnings).toMatch(/could not be stored/);
      // Stored again once the database takes it: the id works.
      const again: any = await (await create({})).json();
      expect(again.store).toBe(true);
      expect(again.switchyard?.warnings ?? []).not.toContain(expect.stringMatching(/could not be stored/));
      expect((await get(again.id)).status).toBe(200);
      const next = await create({ previous_response_id: again.id });
      expect(next.status).toBe(200);
    });
  });
}
