import { describe, expect, it } from 'vitest';
import { baseRequest } from '../../../test/support/ir-fixtures.js';
import { encodeRequest } from './encode-request.js';

describe('the request the Gemini provider sends', () => {
  it('carries system, images, tools, the tool choice, generationConfig, structured output and thinking', () => {
    const body = encodeRequest(baseRequest({
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } }] }],
      tools: [{ name: 'get_weather', description: 'Weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }],
      toolChoice: { type: 'tool', name: 'get_weather' },
      maxTokens: 2048,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END'],
      responseFormat: { type: 'json_schema', name: 'r', schema: { type: 'object', properties: { a: { type: 'number' } } } },
      reasoning: { enabled: true, budgetTokens: 1024 },
    }));
    expect(JSON.stringify(body)).toMatchSnapshot();
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
    expect(body.generationConfig).toMatchObject({ maxOutputTokens: 2048, thinkingConfig: { thinkingBudget: 1024, includeThoughts: true }, responseMimeType: 'application/json' });
  });

  it('never sends reasoning of another family, and sends no thinkingConfig when none was asked', () => {
    const body = encodeRequest(baseRequest({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [
          { type: 'reasoning', text: 'anthropic thought', signature: 'sig-anthropic', origin: { provider: 'anthropic' } },
          { type: 'reasoning', text: 'plain reasoning from a client' },
          { type: 'text', text: 'Hello.' },
        ] },
        { role: 'user', content: [{ type: 'text', text: 'Again' }] },
      ],
    }));
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello.' }] },
      { role: 'user', parts: [{ text: 'Again' }] },
    ]);
    expect(body.generationConfig).toEqual({ maxOutputTokens: 1024 });
  });
});
