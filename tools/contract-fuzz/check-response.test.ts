import { describe, expect, it } from 'vitest';
import { checkHeaders } from './check-response.js';
import type { Operation } from './load-contract.js';

const op = { headers: new Map([[200, new Map([['x-request-id', true], ['x-switchyard-model', false]])]]) } as Operation;

describe('checkHeaders', () => {
  it('passes the declared headers and ignores transport ones', () => {
    expect(checkHeaders(op, { status: 200, headers: { 'x-request-id': 'req_1', 'x-switchyard-model': 'm', 'content-length': '2' } })).toEqual([]);
  });

  it('names a gateway header the document does not declare for that status, and a missing required one', () => {
    expect(checkHeaders(op, { status: 200, headers: { 'retry-after': '1' } })).toEqual([
      'header retry-after is sent but not documented for 200',
      'required header x-request-id is missing from 200',
    ]);
  });
});
