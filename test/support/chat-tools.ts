/** The chat function tools the cross-protocol tests offer: one with an argument, one without. */
export const weatherTool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } };
export const timeTool = { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };
