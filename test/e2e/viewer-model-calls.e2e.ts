import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { chromiumDescribe, launchChromium, loggedInPage } from '../support/chromium';
import { startBody, waitForBatch } from '../support/evals';
import { FakeProvider, startFakeProvider } from '../support/fake-provider';
import { ChildServer, INIT_KEY, ROOT, startChild, tempDir } from '../support/servers';

/**
 * The trial page's model and tool calls in a real browser (Debian's chromium, as in
 * viewer.e2e.ts): a real trial whose agent called its model twice through the gateway of a server
 * recording bodies, the fake provider answering.
 */
const describeWithChromium = chromiumDescribe("the viewer's model-call tests");
const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');

/** Two chat completions through the gateway, the second streamed; the last answer goes to out.txt. */
const AGENT = String.raw`
import json, os, urllib.request
for prompt, stream in (('first prompt: say hello', False), ('second prompt: say goodbye', True)):
    body = {'model': os.environ['ASSAY_MODEL'], 'messages': [{'role': 'user', 'content': prompt}], 'stream': stream}
    request = urllib.request.Request(os.environ['ASSAY_MODEL_BASE_URL'] + '/v1/chat/completions', data=json.dumps(body).encode(),
                                     headers={'authorization': 'Bearer ' + os.environ['ASSAY_MODEL_API_KEY'], 'content-type': 'application/json'})
    with urllib.request.urlopen(request, timeout=30) as answer:
        text = answer.read().decode()
open('out.txt', 'w').write(text)
`;

describeWithChromium("the trial page's model and tool calls", () => {
  let fake: FakeProvider;
  let server: ChildServer;
  let browser: Browser | undefined;
  let page: Page;
  let trialPage: string;

  beforeAll(async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    fake = await startFakeProvider();
    const config = path.join(tempDir(), 'assay.yaml');
    fs.writeFileSync(
      config,
      [
        'allowUnsandboxed: true',
        'gateway: { recordBodies: true }',
        'providers:',
        `  fake: { protocol: openai-compatible, baseURL: "${fake.url}", apiKeyEnv: VIEWER_GATEWAY_KEY }`,
      ].join('\n'),
    );
    // A child server, as in model-gateway.e2e.ts: its gateway's socket directory goes when it exits.
    server = await startChild({
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_CONFIG: config,
      VIEWER_GATEWAY_KEY: 'sk-viewer-gateway-0123456789',
    });
    fake.answer(
      { text: 'first answer from the model', usage: { input: 1234, output: 56 } },
      { text: 'second answer from the model', usage: { input: 321, output: 7 } },
    );
    const started = await server.client.call(
      'evals.batches.start',
      startBody({
        cases: [{ id: 'two-calls', variables: { word: 'hello' }, verify: 'grep -q "second answer from the model" out.txt' }],
        variants: [{ harness: 'command', model: 'fake-model', profile: { provider: 'fake', files: { 'agent.py': AGENT }, run: 'python3 agent.py' } }],
      }),
    );
    expect(started.status).toBe(200);
    const run = (await waitForBatch(server.client, started.body.id)).runs[0];
    expect([run.trials[0].status, run.trials[0].failure]).toEqual(['passed', null]);
    trialPage = `${server.url}/#/runs/${run.id}/trials/${run.trials[0].id}`;

    browser = await launchChromium();
    page = await loggedInPage(browser, server.url);
  }, 180000);

  afterAll(async () => {
    await browser?.close();
    await server.stop();
    await fake.close();
  });

  const openTrial = async () => {
    // From elsewhere: the same address again would keep the page as it was.
    await page.goto('about:blank');
    await page.goto(trialPage);
    await page.locator('#trajectory').waitFor();
  };
  const isOpen = (details: Locator) => details.evaluate((element: any) => element.open as boolean);

  it("shows each call's model, status, tokens and time collapsed; opened, its own request and response, read in one request", async () => {
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/evals.trials.modelCalls')) asked.push(request.postData() ?? '');
    });
    await openTrial();
    const calls = page.locator('#trajectory li.model-call');
    expect(await calls.count()).toBe(2);
    const [first, second] = [calls.nth(0), calls.nth(1)];
    const firstSummary = (await first.locator('summary').textContent())!.replace(/\s+/g, ' ');
    expect(firstSummary).toMatch(/^model call fake\/fake-model HTTP 200 1234 in · 56 out · \d+ ms$/);
    expect(await second.locator('summary').textContent()).toMatch(/321 in · 7 out · \d+ ms · first token \d+ ms/);
    expect(await isOpen(first.locator('details'))).toBe(false);
    expect(await isOpen(second.locator('details'))).toBe(false);
    expect(asked).toEqual([]);

    await first.locator('summary').click();
    const request = first.getByLabel('Request body');
    await request.waitFor();
    expect(await request.textContent()).toContain('"content": "first prompt: say hello"');
    expect(await first.getByLabel('Response body').textContent()).toContain('first answer from the model');

    await second.locator('summary').click();
    await second.getByLabel('Request body').waitFor();
    expect(await second.getByLabel('Request body').textContent()).toContain('second prompt: say goodbye');
    // A streamed answer is its events as they came, not JSON.
    expect(await second.getByLabel('Response body').textContent()).toMatch(/^data: .*second answer from the model/);
    await first.locator('summary').click();
    await first.locator('summary').click();
    expect(asked).toEqual([expect.stringContaining('"trialId":"trl_')]);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'trial-model-calls.png'), fullPage: true });
  });

  it("says when bodies were not recorded, and shows tool calls (the trial's answer given entries no harness writes yet)", async () => {
    // No producer of tool-call entries exists yet, and a server records bodies or not for all its
    // trials: the real answers are changed on their way to the page.
    await page.route('**/v1/evals.trials.modelCalls', async (route) => {
      const answer = await (await route.fetch()).json();
      await route.fulfill({ json: { calls: answer.calls.map((c: any) => ({ ...c, request: null, response: null })) } });
    });
    const longInput = `grep -rn "needle" ${'src/'.repeat(30)}`;
    await page.route('**/v1/evals.runs.get', async (route) => {
      const run = await (await route.fetch()).json();
      run.trials[0].trajectory.push(
        { _tag: 'tool-call', turn: 1, tool: 'bash', input: longInput, output: 'src/a.ts:1: needle', at: Date.now() },
        { _tag: 'tool-call', turn: 1, tool: 'edit', input: { path: 'out.txt', text: 'hello' }, output: null, at: Date.now() },
      );
      await route.fulfill({ json: run });
    });
    try {
      await openTrial();
      const call = page.locator('#trajectory li.model-call').first();
      await call.locator('summary').click();
      await call.locator('p.hint', { hasText: 'bodies not recorded (gateway.recordBodies is off)' }).waitFor();
      expect(await call.getByLabel('Request body').count()).toBe(0);

      const tools = page.locator('#trajectory li.tool-call');
      expect(await tools.count()).toBe(2);
      const [bash, edit] = [tools.nth(0), tools.nth(1)];
      expect((await bash.locator('summary').textContent())!.trim()).toBe(`tool bash ${longInput.slice(0, 80)}…`);
      expect((await edit.locator('summary').textContent())!.trim()).toBe('tool edit { "path": "out.txt", "text": "hello" }');
      expect(await isOpen(bash.locator('details'))).toBe(false);
      expect(await bash.getByLabel('Tool input').isVisible()).toBe(false);

      await bash.locator('summary').click();
      expect(await bash.getByLabel('Tool input').textContent()).toBe(longInput);
      expect(await bash.getByLabel('Tool output').textContent()).toBe('src/a.ts:1: needle');
      await edit.locator('summary').click();
      expect(JSON.parse((await edit.getByLabel('Tool input').textContent())!)).toEqual({ path: 'out.txt', text: 'hello' });
      expect(await edit.getByLabel('Tool output').count()).toBe(0);
      expect(await edit.locator('p.hint').textContent()).toBe('No output.');
    } finally {
      await page.unrouteAll();
    }
  });
});
