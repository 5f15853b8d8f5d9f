import { isApiPath, ServedRoute } from '../served-routes';
import type { DeclaredOperation } from './nest-operations';
import { JsonSchema, requestSchemas, SCHEMA_PREFIX } from './request-schemas';
import { ERROR_SCHEMAS, errorResponses } from './error-schemas';

/** What a route answers, written once beside the others (see the operations' answer tables). */
export interface RouteAnswer {
  summary: string;
  answer: JsonSchema;
  /** Error statuses beyond 401 (for routes behind a credential) and 500. */
  errors: number[];
  /** The media type of a success; JSON unless said. */
  contentType?: string;
  description?: string;
  /** Headers the route reads, as OpenAPI parameters. */
  headers?: Array<{ name: string; description: string; schema: JsonSchema }>;
}

export interface DocumentSources {
  version: string;
  /** The routes Fastify serves. */
  served: readonly ServedRoute[];
  /** What the controllers declare about them. */
  declared: readonly DeclaredOperation[];
  /** Keyed by operation name, or by `GET /path` for routes without one. */
  answers: Readonly<Record<string, RouteAnswer>>;
  shapes: Readonly<Record<string, JsonSchema>>;
}

const SECURITY_SCHEME = 'bearer';

/**
 * The OpenAPI 3.1 document of every API route the server serves: the route list is Fastify's own,
 * request bodies are the DTOs' schemas, answers come from the answer tables. A served route
 * without an answer is a programming error, raised here (and by the document's test).
 */
export function buildOpenApiDocument(sources: DocumentSources): JsonSchema {
  const routes = sources.served.filter((route) => isApiPath(route.path));
  const operations = routes.map((route) => ({
    route,
    declared: sources.declared.find((declared) => declared.method === route.method && declared.path === route.path) ?? null,
  }));
  const bodies = operations.flatMap(({ declared }) => (declared?.body ? [declared.body] : []));
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const { route, declared } of operations.sort((a, b) => a.route.path.localeCompare(b.route.path))) {
    const key = declared?.name ?? `${route.method} ${route.path}`;
    const answer = sources.answers[key] as RouteAnswer | undefined;
    if (!answer) throw new Error(`The API document has no answer for ${key}: add it to the answer tables.`);
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operationObject(route, declared, key, answer) };
  }
  const schemas = { ...requestSchemas(bodies), ...sources.shapes, ...ERROR_SCHEMAS };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Assay API',
      version: sources.version,
      description:
        'Every operation is POST /v1/<area>.<resource>.<operation> with a JSON body, reads included; a few reads are GETs ' +
        '(the probes, this document, the live progress stream). Errors are JSON with a `_tag` and a `message`.',
    },
    servers: [{ url: '/' }],
    security: [{ [SECURITY_SCHEME]: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (`assay_…`) or, where the operator configured OAuth, a signed access token (JWT).',
        },
      },
    },
  };
}

function operationObject(route: ServedRoute, declared: DeclaredOperation | null, key: string, answer: RouteAnswer): JsonSchema {
  const isPublic = declared ? declared.isPublic : true;
  const permission = isPublic ? 'none (public)' : declared?.permission ? `\`${declared.permission}\`` : 'any valid credential';
  const operation: JsonSchema = {
    operationId: declared?.name ?? route.path.replace(/^\//, '').replace(/[^A-Za-z0-9]+/g, '_'),
    summary: answer.summary,
    description: [answer.description, `**Permission:** ${permission}.`].filter(Boolean).join('\n\n'),
    tags: [tagOf(key, route.path)],
    ...(isPublic ? { security: [] } : {}),
    ...(declared?.permission ? { 'x-permission': declared.permission } : {}),
  };
  const parameters = [...queryParameters(declared, route), ...(answer.headers ?? []).map((header) => ({ in: 'header', ...header }))];
  if (parameters.length > 0) operation.parameters = parameters;
  if (route.method === 'POST') operation.requestBody = requestBody(declared);
  operation.responses = {
    '200': { description: answer.summary, content: { [answer.contentType ?? 'application/json']: { schema: answer.answer } } },
    ...errorResponses([...answer.errors, ...(isPublic ? [] : [401]), 500]),
  };
  return operation;
}

function requestBody(declared: DeclaredOperation | null): JsonSchema {
  const schema = declared?.body ? { $ref: SCHEMA_PREFIX + declared.body.name } : { type: 'object', description: 'No input: send {}.' };
  return { required: true, content: { 'application/json': { schema } } };
}

/** A GET's query DTO (the pipe decodes it like a body) as query parameters. */
function queryParameters(declared: DeclaredOperation | null, route: ServedRoute): JsonSchema[] {
  if (route.method !== 'GET' || !declared?.body) return [];
  const schema = requestSchemas([declared.body])[declared.body.name];
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([name, property]) => ({
    in: 'query',
    name,
    required: required.has(name),
    schema: property,
  }));
}

function tagOf(key: string, path: string): string {
  if (!path.startsWith('/v1/') || key.startsWith('GET /v1/')) return 'service';
  return key.split('.')[0];
}
