import { z } from 'zod';
import { parseCidr, serverPolicySchema } from '@bulkhead/core';

export const WEB_POLICY_FILE = 'web_policy.yaml';

const MIB = 1024 * 1024;

const cidrSchema = z
  .string()
  .min(1)
  .refine((text) => {
    try {
      parseCidr(text);
      return true;
    } catch {
      return false;
    }
  }, 'must be an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8 (a bare address is one address)');

export const webLimitsSchema = z
  .strictObject({
    max_response_bytes: z.number().int().min(1024).max(1024 * MIB).default(10 * MIB).describe('Most bytes read from one response, counted after decompression; past it the fetch stops and says so'),
    timeout_ms: z.number().int().min(100).max(600_000).default(30_000).describe('A whole fetch (all redirects, the body) ends after this long; timeout_ms in a call may only shorten it'),
    connect_timeout_ms: z.number().int().min(100).max(120_000).default(10_000).describe('Each TCP/TLS connection must be set up within this long'),
    default_max_length: z.number().int().min(100).max(1_000_000).default(20_000).describe('Characters web_fetch returns when max_length is not given'),
    max_output_bytes: z.number().int().min(0).default(512 * 1024).describe('Hard cap on any result text; 0 turns it off'),
  })
  .prefault({});

export const SEARCH_PROVIDERS = ['duckduckgo', 'searxng', 'brave'] as const;
export type SearchProvider = (typeof SEARCH_PROVIDERS)[number];

export const webSearchSchema = z
  .strictObject({
    provider: z.enum(SEARCH_PROVIDERS).default('duckduckgo').describe('duckduckgo (keyless, its HTML endpoint), searxng (a SearXNG instance\'s JSON API; needs endpoint) or brave (the Brave Search API; needs a key)'),
    endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('The provider\'s URL; required for searxng (its base URL), otherwise the provider\'s public address'),
    allow_private_endpoint: z
      .boolean()
      .default(false)
      .describe('The endpoint may be a loopback or private address (a self-hosted SearXNG); only its host and port are exempted, and no redirect is followed from it'),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').default('BRAVE_SEARCH_API_KEY').describe('brave: the environment variable holding the API key'),
    api_key_file: z.string().min(1).optional().describe('brave: a file holding the API key (read when the variable is not set); keys never go in this file'),
    timeout_ms: z.number().int().min(100).max(120_000).default(15_000).describe('A search request ends after this long'),
  })
  .prefault({});

export const webRobotsSchema = z
  .strictObject({
    respect: z.boolean().default(true).describe('Consult each host\'s robots.txt before fetching from it (a 5xx answer means everything is disallowed)'),
    cache_ttl_ms: z.number().int().min(0).max(7 * 24 * 3_600_000).default(3_600_000).describe('How long a robots.txt is kept per host'),
  })
  .prefault({});

export const webCacheSchema = z
  .strictObject({
    max_bytes: z.number().int().min(0).max(1024 * MIB).default(32 * MIB).describe('Bytes of response bodies kept in memory for revalidation with ETag / Last-Modified; 0 turns the cache off'),
    max_entries: z.number().int().min(1).max(100_000).default(256).describe('Responses kept at most'),
  })
  .prefault({});

export const webPolicySchema = serverPolicySchema(true, {
  allow_private: z
    .array(cidrSchema)
    .default([])
    .describe('CIDRs of loopback, private, link-local, CGNAT or reserved addresses that may be fetched (intranet use); cloud metadata and unspecified addresses stay refused'),
  allow_hosts: z.array(z.string().min(1)).default([]).describe('When non-empty, only host names matching one of these globs are fetched (*.example.com)'),
  deny_hosts: z.array(z.string().min(1)).default([]).describe('Host names matching one of these globs are refused'),
  ports: z.array(z.number().int().min(1).max(65_535)).default([]).describe('Ports allowed besides 80 and 443'),
  user_agent: z.string().min(1).max(300).regex(/^[\x20-\x7e]+$/, 'must be printable ASCII').default('Bulkhead-web/0.1').describe('The User-Agent header sent with every request'),
  limits: webLimitsSchema,
  robots: webRobotsSchema,
  cache: webCacheSchema,
  search: webSearchSchema,
});

export type WebPolicy = z.output<typeof webPolicySchema>;
export type WebLimits = WebPolicy['limits'];
export type WebSearchPolicy = WebPolicy['search'];
