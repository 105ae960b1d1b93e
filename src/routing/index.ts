export * from './catalog.js';
export * from './plan-route.js';
export * from './resolve-reasoning.js';
export * from './fallback-policy.js';
export * from './pick-deployment.js';
