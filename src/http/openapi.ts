import { z } from 'zod';
import { ERRORS } from './errors.ts';
import { type AnyRoute, JsonText, route } from './route.ts';

/**
 * The OpenAPI 3.1 description of the HTTP API, generated from the route table (docs/api-reference.md): one
 * operation per route with its path parameters, the credential kinds its policy admits, its sudo mode and
 * rate-limit bucket, and its JSON body and query as JSON Schema (from the same zod schemas that validate
 * them). Test-harness routes are left out. A test keeps it and the route table in step.
 */
export function buildOpenApi(routes: readonly AnyRoute[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of routes) {
    if (spec.policy === 'test') continue;
    const { path, parameters } = openApiPath(spec);
    const operations = paths[path] ?? {};
    operations[spec.method.toLowerCase()] = operation(spec, parameters);
    paths[path] = operations;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hearth API',
      version: '1',
      description:
        'Generated from the route table. Errors are `{code, message}` with the codes of docs/errors.md; ' +
        'x-hearth-policy, x-hearth-sudo and x-ratelimit-bucket carry what docs/api-reference.md explains.',
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Session token: `flx_…`' },
        bot: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Bot <application id>.<secret>`' },
        oauth2: { type: 'http', scheme: 'bearer', description: 'OAuth2 access token (`Bearer …`)' },
        adminKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Admin fa_<id>_<secret>`' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'string', enum: Object.keys(ERRORS) }, message: { type: 'string' } },
        },
      },
    },
  };
}

/** Serves the document at `GET /v1/openapi.json`, built once from the final route table. */
export function openApiRoute(routes: readonly AnyRoute[], serverUrl: string): AnyRoute {
  let text: JsonText | undefined;
  return route({
    method: 'GET',
    path: '/openapi.json',
    policy: 'none',
    handler() {
      text ??= new JsonText(JSON.stringify(buildOpenApi(routes, serverUrl)));
      return text;
    },
  });
}

/** `/channels/:channelId/messages` → `/v1/channels/{channelId}/messages`; a `*` tail becomes `{path}`. */
export function openApiPath(spec: AnyRoute): { path: string; parameters: string[] } {
  const full = spec.root ? spec.path : `/v1${spec.path}`;
  const parameters: string[] = [];
  const path = full
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) {
        parameters.push(segment.slice(1));
        return `{${segment.slice(1)}}`;
      }
      if (segment === '*') {
        parameters.push('path');
        return '{path}';
      }
      return segment;
    })
    .join('/');
  return { path, parameters };
}

const SECURITY: Record<AnyRoute['policy'], string[]> = {
  none: [],
  'credential-free': [],
  self: ['bot'],
  test: [],
  user: ['session', 'bot'],
  'user-only': ['session'],
  bot: ['bot'],
  oauth2: ['oauth2'],
  admin: ['adminKey', 'session'],
};

function operation(spec: AnyRoute, pathParameters: string[]): Record<string, unknown> {
  const schemes = [...SECURITY[spec.policy]];
  if (spec.scope && spec.policy === 'user') schemes.push('oauth2');
  const op: Record<string, unknown> = {
    operationId: `${spec.method.toLowerCase()}${openApiPath(spec).path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    'x-hearth-policy': spec.policy,
    security: schemes.map((scheme) => ({ [scheme]: scheme === 'oauth2' && spec.scope ? [spec.scope] : [] })),
    parameters: [
      ...pathParameters.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...queryParameters(spec),
    ],
    responses: {
      '200': { description: 'Success (JSON)' },
      '204': { description: 'Success, no body' },
      default: {
        description: 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  };
  if (spec.acl) op['x-hearth-acl'] = spec.acl;
  if (spec.sudo) op['x-hearth-sudo'] = typeof spec.sudo === 'function' ? 'per-body' : spec.sudo;
  if (spec.localAuth) op['x-hearth-sso-enforced-refusal'] = true;
  if (spec.admitsSuspicious) op['x-hearth-admits-suspicious'] = true;
  if (spec.rateLimit)
    op['x-ratelimit-bucket'] = {
      name: spec.rateLimit.bucket,
      limit: spec.rateLimit.limit,
      window_seconds: spec.rateLimit.windowSeconds,
    };
  const body = requestBody(spec);
  if (body) op.requestBody = body;
  return op;
}

function queryParameters(spec: AnyRoute): Record<string, unknown>[] {
  const schema = jsonSchema(spec.query);
  const properties = (schema?.properties ?? {}) as Record<string, unknown>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: property,
  }));
}

function requestBody(spec: AnyRoute): Record<string, unknown> | undefined {
  const kind = spec.bodyKind ?? 'json';
  if (kind === 'raw' || kind === 'multipart' || kind === 'stream') {
    return {
      content: {
        'application/json': { schema: { type: 'object' } },
        'multipart/form-data': { schema: { type: 'object', properties: { payload_json: { type: 'string' } } } },
      },
    };
  }
  const schema = jsonSchema(spec.body);
  if (!schema) return undefined;
  const type = kind === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  return { content: { [type]: { schema } } };
}

function jsonSchema(schema: z.ZodType | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  try {
    const generated = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
    delete generated.$schema;
    return generated;
  } catch {
    // A schema with a shape JSON Schema cannot express (a recursive refinement) is described loosely.
    return { type: 'object' };
  }
}
