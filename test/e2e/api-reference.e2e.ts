import * as fs from 'node:fs';
import * as path from 'node:path';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { PERMISSION_KEY } from '#infrastructure/http/operation.decorator';
import { InProcessServer, ROOT, startInProcess } from '../support/servers';

interface Route {
  method: 'GET' | 'POST';
  path: string;
  /** What the operation declares: a permission, null for any credential, undefined for a public GET. */
  permission?: string | null;
}

/** Every route the running application registered, read from its controllers' metadata. */
function registeredRoutes(server: InProcessServer): Route[] {
  const routes: Route[] = [];
  for (const module of server.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as new (...args: never[]) => unknown;
      const prefix = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '/');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name] as unknown;
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const routePath = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        if (routePath === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number] as Route['method'];
        const permission = Reflect.getMetadata(PERMISSION_KEY, handler) as string | null | undefined;
        routes.push({ method, path: path.posix.join('/', prefix, routePath), permission });
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path));
}

/** The reference's sections, by heading: `### \`evals.batches.start\`` or `### \`GET /health\``. */
function documentedSections(reference: string): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = reference.split(/^(?=#{2,3} )/m);
  for (const part of parts) {
    const heading = /^### `([^`]+)`/.exec(part);
    if (heading) sections.set(heading[1], part);
  }
  return sections;
}

/** An operation (any route under /v1/ that declares a permission, GETs included) by its name; a public GET by its path. */
const headingOf = (route: Route) => (route.permission !== undefined && route.path.startsWith('/v1/') ? route.path.slice(4) : `${route.method} ${route.path}`);

/** The reference must not fall behind the code: every operation served is documented with a curl example. */
describe('docs/api.md against the running server', () => {
  let server: InProcessServer;
  let routes: Route[];
  const reference = fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');
  const sections = documentedSections(reference);

  beforeAll(async () => {
    server = await startInProcess();
    routes = registeredRoutes(server);
  });

  afterAll(async () => {
    await server.close();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  });

  it('finds the operations the server serves', async () => {
    expect(routes.length).toBeGreaterThanOrEqual(30);
    expect(routes).toContainEqual({ method: 'POST', path: '/v1/evals.batches.start', permission: 'evals:write' });
    expect(routes).toContainEqual({ method: 'GET', path: '/health', permission: undefined });
    // The walk reads what the server really routes: each answers something other than "no such operation".
    for (const route of routes) {
      const answer = await server.client.request(route.path, {}, { method: route.method });
      expect([route.path, answer.status]).not.toEqual([route.path, 404]);
    }
  });

  it('documents every operation the server serves, each with a curl example of it', () => {
    for (const route of routes) {
      const section = sections.get(headingOf(route)) ?? '';
      const url = `$ASSAY_URL${route.path}`;
      expect([headingOf(route), section.includes('```sh') && section.includes('curl') && section.includes(url)]).toEqual([headingOf(route), true]);
      if (route.permission !== undefined) {
        const permission = route.permission === null ? 'any valid credential' : `\`${route.permission}\``;
        expect([headingOf(route), section.includes(`**Permission:** ${permission}`)]).toEqual([headingOf(route), true]);
        expect([headingOf(route), section.includes('Bearer $ASSAY_API_KEY')]).toEqual([headingOf(route), true]);
      }
    }
  });

  it('documents no operation the server does not serve', () => {
    const served = new Set(routes.map(headingOf));
    const operationLike = [...sections.keys()].filter((heading) => /^[a-z]+(\.[a-z]+)+$|^(GET|POST) \//.test(heading));
    expect(operationLike.filter((heading) => !served.has(heading))).toEqual([]);
  });

  it('points nowhere outside the repository', () => {
    const decisions = fs.readdirSync(path.join(ROOT, 'docs/decisions')).map((name) => `docs/decisions/${name}`);
    for (const file of ['docs/api.md', ...decisions, 'README.md']) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      expect([file, text.match(/\.\.\/shared|ARCHITECTURE\.md|spec\/agent-evaluation-api/g)]).toEqual([file, null]);
    }
  });
});
