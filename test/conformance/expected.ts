// What the conformance suite's scenarios report, check by check, directly against each server and
// through the gateway in front of both (test/e2e/gateway-conformance.test.ts compares them exactly;
// docs/gateway.md#conformance says why each failure through the gateway cannot pass).
import type { Check, Scenario } from './suite.js';

const pass = (id: Scenario): Check[] => [{ id, status: 'SUCCESS' }];
const fail = (id: Scenario, errorMessage: string): Check[] => [{ id, status: 'FAILURE', errorMessage }];
/** How the suite reports a request that the server answered with a JSON-RPC error (the SDK repeats the prefix). */
const refused = (id: Scenario, code: number, message: string): Check[] => fail(id, `Failed: MCP error ${code}: MCP error ${code}: ${message}`);

const session = { 'server-initialize': pass('server-initialize'), ping: pass('ping'), 'logging-set-level': pass('logging-set-level') } as const;

export const DIRECT_REFERENCE: Record<Scenario, Check[]> = {
  ...session,
  'resources-list': pass('resources-list'),
  'resources-read-text': pass('resources-read-text'),
  'resources-read-binary': pass('resources-read-binary'),
  'resources-templates-read': pass('resources-templates-read'),
  'resources-subscribe': pass('resources-subscribe'),
  'resources-unsubscribe': pass('resources-unsubscribe'),
  'prompts-list': pass('prompts-list'),
  'prompts-get-simple': pass('prompts-get-simple'),
  'prompts-get-with-args': pass('prompts-get-with-args'),
  'prompts-get-embedded-resource': pass('prompts-get-embedded-resource'),
  'prompts-get-with-image': pass('prompts-get-with-image'),
  'completion-complete': pass('completion-complete'),
};

// server-everything is not the suite's reference server: the scenarios that ask for a resource or
// prompt by name ask for names it does not have.
export const DIRECT_EVERYTHING: Record<Scenario, Check[]> = {
  ...session,
  'resources-list': pass('resources-list'),
  'resources-read-text': refused('resources-read-text', -32602, 'Resource test://static-text not found'),
  'resources-read-binary': refused('resources-read-binary', -32602, 'Resource test://static-binary not found'),
  'resources-templates-read': refused('resources-templates-read', -32602, 'Resource test://template/123/data not found'),
  'resources-subscribe': pass('resources-subscribe'),
  'resources-unsubscribe': pass('resources-unsubscribe'),
  'prompts-list': pass('prompts-list'),
  'prompts-get-simple': refused('prompts-get-simple', -32602, 'Prompt test_simple_prompt not found'),
  'prompts-get-with-args': refused('prompts-get-with-args', -32602, 'Prompt test_prompt_with_arguments not found'),
  'prompts-get-embedded-resource': refused('prompts-get-embedded-resource', -32602, 'Prompt test_prompt_with_embedded_resource not found'),
  'prompts-get-with-image': refused('prompts-get-with-image', -32602, 'Prompt test_prompt_with_image not found'),
  'completion-complete': refused('completion-complete', -32602, 'Prompt test_prompt_with_arguments not found'),
};

/** The gateway's answer to a prompt asked for by its bare name: it lists and finds prompts as <ns>__<name>, as tools. */
const bareName = (id: Scenario, prompt: string): Check[] => fail(id, `Failed: MCP error -32602: Unknown prompt ${prompt}; prompts/list lists the prompts there are`);

// In front of the reference server (as `reference`) and server-everything (as `everything`): the
// resources keep their URIs (no two servers offer the same one), the prompts are reference__… .
export const THROUGH_GATEWAY: Record<Scenario, Check[]> = {
  ...session,
  'resources-list': pass('resources-list'),
  'resources-read-text': pass('resources-read-text'),
  'resources-read-binary': pass('resources-read-binary'),
  'resources-templates-read': pass('resources-templates-read'),
  'resources-subscribe': pass('resources-subscribe'),
  'resources-unsubscribe': pass('resources-unsubscribe'),
  'prompts-list': pass('prompts-list'),
  'prompts-get-simple': bareName('prompts-get-simple', 'test_simple_prompt'),
  'prompts-get-with-args': bareName('prompts-get-with-args', 'test_prompt_with_arguments'),
  'prompts-get-embedded-resource': bareName('prompts-get-embedded-resource', 'test_prompt_with_embedded_resource'),
  'prompts-get-with-image': bareName('prompts-get-with-image', 'test_prompt_with_image'),
  'completion-complete': bareName('completion-complete', 'test_prompt_with_arguments'),
};
