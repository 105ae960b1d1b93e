/** The AI SDK tool the `ai` 7 suites give the model: get_weather, recording each city it is called with. */
import { jsonSchema, tool } from 'ai';

export function weatherTools(calls: string[]) {
  return {
    get_weather: tool({
      description: 'Weather of a city',
      inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
      execute: async ({ city }) => {
        calls.push(city);
        return `Sunny in ${city}`;
      },
    }),
  };
}
