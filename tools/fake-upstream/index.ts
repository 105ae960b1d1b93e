export { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions, type RecordedRequest } from './server.js';
export { parseScenario, type Scenario } from './scenario.js';
export { scriptsDir, transcriptsDir } from './transcripts.js';
