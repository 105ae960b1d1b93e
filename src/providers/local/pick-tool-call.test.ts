import { describe, expect, it } from 'vitest';
import type { Tool } from '../../ir/index.js';
import { makeRequest } from '../../../test/support/local-call.js';
import { mentions, pickToolCalls, userStrings } from './pick-tool-call.js';
import { readConversation } from './read-conversation.js';

const weather: Tool = {
  name: 'get_weather',
  description: 'Get the current weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const stocks: Tool = {
  name: 'lookupTicker',
  description: 'Look up the latest stock quote for a ticker symbol',
  inputSchema: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
};

function ask(text: string, over: Parameters<typeof makeRequest>[0] = {}) {
  const req = makeRequest({ tools: [weather, stocks], messages: [{ role: 'user', content: [{ type: 'text', text }] }], ...over });
  return pickToolCalls(req, readConversation(req));
}

describe('mentions', () => {
  it('matches the name, the spaced name, a name part or a description word', () => {
    expect(mentions(weather, 'please run get_weather')).toBe(true);
    expect(mentions(weather, 'Get weather now')).toBe(true);
    expect(mentions(weather, 'Is it raining? What is the weather like?')).toBe(true);
    expect(mentions(stocks, 'what is the stock price of ACME')).toBe(true);
    expect(mentions(stocks, 'Tell me a ticker')).toBe(true);
  });

  it('ignores generic words', () => {
    expect(mentions(weather, 'Get me the current news')).toBe(false);
    expect(mentions(stocks, 'Hello there')).toBe(false);
  });
});

describe('userStrings', () => {
  it('yields quoted text and names in order of appearance, then cycles', () => {
    const s = userStrings("What's the weather in Paris and in \"New York\" and São Paulo? Thanks.", []);
    expect([s.next(), s.next(), s.next(), s.next()]).toEqual(['Paris', 'New York', 'São Paulo', 'Paris']);
  });

  it('falls back to "example"', () => {
    expect(userStrings('what is the weather?', []).next()).toBe('example');
  });
});

describe('pickToolCalls', () => {
  it('calls a mentioned tool with a value from the message', () => {
    expect(ask('What is the weather in Paris?')).toEqual([{ name: 'get_weather', arguments: '{"city":"Paris"}' }]);
  });

  it('calls nothing when nothing is mentioned or tool_choice is none', () => {
    expect(ask('Tell me a joke')).toEqual([]);
    expect(ask('What is the weather in Paris?', { toolChoice: { type: 'none' } })).toEqual([]);
  });

  it('calls both mentioned tools, or only the first when parallel calls are off', () => {
    expect(ask('Weather in Paris and the stock quote for ACME').map((c) => c.name)).toEqual(['get_weather', 'lookupTicker']);
    expect(ask('Weather in Paris and the stock quote for ACME', { parallelToolCalls: false }).map((c) => c.name)).toEqual(['get_weather']);
  });

  it('honours required and a named tool', () => {
    expect(ask('Tell me a joke', { toolChoice: { type: 'required' } }).map((c) => c.name)).toEqual(['get_weather']);
    expect(ask('What is the weather in Paris?', { toolChoice: { type: 'tool', name: 'lookupTicker' } })).toEqual([
      { name: 'lookupTicker', arguments: '{"symbol":"Paris"}' },
    ]);
  });
});
