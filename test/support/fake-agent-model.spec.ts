import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agentTask, pickWriterTool } from './fake-agent-model';
import { FakeProvider, FakeRequest, startFakeProvider } from './fake-provider';
import { tempDir } from './temp-dirs';

/** Tools as each CLI declares them at the version named (long parameter lists trimmed), written `name(parameter,…)` separated by spaces. */
type Declared = Array<[string, string[]]>;
const declare = (list: string): Declared => Array.from(list.matchAll(/(\w+)\(([^)]*)\)/g), (match) => [match[1], match[2].split(',').filter(Boolean)]);

const schema = (names: string[]) => ({ type: 'object', properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])) });
const anthropicTools = (list: string) => declare(list).map(([name, names]) => ({ name, description: name, input_schema: schema(names) }));
const openAITools = (list: string) => declare(list).map(([name, names]) => ({ type: 'function', function: { name, parameters: schema(names) } }));
const responsesTools = (list: string) => [
  ...declare(list).map(([name, names]) => ({ type: 'function', name, strict: false, parameters: schema(names) })),
  { type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'spawn_agent' }] },
  { type: 'web_search', external_web_access: false },
];
const geminiTools = (list: string) => [
  { functionDeclarations: declare(list).map(([name, names]) => ({ name, description: name, parametersJsonSchema: schema(names) })) },
];

const FILE = { path: '/work/ws/out.txt', content: 'hello\n' };
const written = (name: string, pathName: string, contentName: string) => ({ name, arguments: { [pathName]: FILE.path, [contentName]: FILE.content } });

const CLIS: Array<{ cli: string; protocol: FakeRequest['protocol']; tools: unknown; expected: { name: string; arguments: Record<string, unknown> } }> = [
  {
    cli: 'Claude Code 2.1.332',
    protocol: 'anthropic',
    tools: anthropicTools(
      'Agent(description,prompt,subagent_type,model,effort,run_in_background,isolation) Bash(command,timeout,description,run_in_background,dangerouslyDisableSandbox) ' +
        'Edit(file_path,old_string,new_string,replace_all) ListAgents(channel,q,cursor) Read(file_path,offset,limit,pages,allow_large) ReportFindings(level,findings) ' +
        'ScheduleWakeup(delaySeconds,reason,prompt,stop,noop) Skill(skill,args) ToolSearch(query,max_results) ' +
        'Workflow(script,name,description,title,args,scriptPath,resumeFromRunId) DeferredToolPlaceholder() Write(file_path,content)',
    ),
    expected: written('Write', 'file_path', 'content'),
  },
  {
    cli: 'Codex 0.171.0',
    protocol: 'responses',
    tools: responsesTools(
      'exec_command(cmd,justification,login,max_output_tokens,prefix_rule,sandbox_permissions,shell,tty,workdir,yield_time_ms) ' +
        'write_stdin(chars,max_output_tokens,session_id,yield_time_ms) request_user_input(questions) view_image(path) get_goal() create_goal(objective,token_budget) update_goal(status)',
    ),
    expected: { name: 'exec_command', arguments: { cmd: `printf '%s' 'hello\n' > '/work/ws/out.txt'` } },
  },
  {
    cli: 'Gemini CLI 0.61.0',
    protocol: 'gemini',
    tools: geminiTools(
      'update_topic(title,summary,strategic_intent,wait_for_previous) list_directory(dir_path,ignore,file_filtering_options) read_file(file_path,start_line,end_line) ' +
        'grep_search(pattern,dir_path,include_pattern) glob(pattern,dir_path) replace(file_path,instruction,old_string,new_string,allow_multiple) write_file(file_path,content) ' +
        'web_fetch(prompt) run_shell_command(command,description,dir_path,is_background,delay_ms) google_web_search(query) write_todos(todos) invoke_agent(agent_name,prompt)',
    ),
    expected: written('write_file', 'file_path', 'content'),
  },
  {
    cli: 'opencode 1.18.33',
    protocol: 'openai',
    tools: openAITools(
      'bash(command,timeout,workdir) edit(filePath,oldString,newString,replaceAll) glob(pattern,path) grep(pattern,path,include) read(filePath,offset,limit) skill(name) ' +
        'task(description,prompt,subagent_type,task_id,command) todowrite(todos) webfetch(url,format,timeout) write(content,filePath)',
    ),
    expected: written('write', 'filePath', 'content'),
  },
  {
    cli: 'Qwen Code 0.24.4',
    protocol: 'openai',
    tools: openAITools(
      'agent(description,prompt,subagent_type) edit(file_path,old_string,new_string,replace_all) get_goal() glob(pattern,path) grep_search(pattern,glob,path,limit) list_agents() ' +
        'notebook_edit(notebook_path,cell_id,new_source,cell_type,edit_mode) read_file(file_path,offset,limit,pages) run_shell_command(command,is_background,timeout,description,directory) ' +
        'skill(skill,args) tool_call(name,arguments) tool_search(query,max_results) update_goal(status,reason,blockerKind) write_file(file_path,content,record_as_artifact)',
    ),
    expected: written('write_file', 'file_path', 'content'),
  },
  {
    cli: 'pi 0.73.1',
    protocol: 'anthropic',
    tools: anthropicTools('read(path,offset,limit) bash(command,timeout) edit(path,edits) write(path,content)'),
    expected: written('write', 'path', 'content'),
  },
  {
    cli: 'Copilot 1.0.102',
    protocol: 'openai',
    tools: openAITools(
      'bash(command,description) read_bash(shellId) view(path,view_range) create(path,file_text) edit(path,old_str,new_str) grep(pattern) glob(pattern) task(prompt)',
    ),
    expected: written('create', 'path', 'file_text'),
  },
  {
    cli: 'cline 3.0.65',
    protocol: 'openai',
    tools: openAITools(
      'read_files(file_paths) search_codebase(query) run_commands(commands) fetch_web_content(url) editor(path,old_text,new_text,insert_line) ask_question(question) spawn_agent(task) team_status()',
    ),
    expected: written('editor', 'path', 'new_text'),
  },
  {
    cli: 'Continue 1.5.47',
    protocol: 'openai',
    tools: openAITools(
      'Read(filepath) Write(filepath,content) List(dirpath) Bash(command) Fetch(url) Checklist(checklist) Edit(filepath,old_string,new_string) Exit()',
    ),
    expected: written('Write', 'filepath', 'content'),
  },
];

describe('pickWriterTool', () => {
  it.each(CLIS)("picks $cli's writer and fills its parameters", ({ protocol, tools, expected }) => {
    expect(pickWriterTool(tools, protocol, FILE)).toEqual(expected);
  });

  it('reads Gemini declarations under `parameters` as well as `parametersJsonSchema`', () => {
    const tools = [{ functionDeclarations: [{ name: 'write_file', parameters: schema(['file_path', 'content']) }] }];
    expect(pickWriterTool(tools, 'gemini', FILE)).toEqual({ name: 'write_file', arguments: { file_path: FILE.path, content: FILE.content } });
  });

  it('returns null when no declared tool can write a file', () => {
    expect(pickWriterTool(openAITools('read(path)'), 'openai', FILE)).toBeNull();
    expect(pickWriterTool(undefined, 'responses', FILE)).toBeNull();
  });

  it("the shell fallback's command writes the content exactly, quotes and percent signs included", () => {
    const file = { path: path.join(tempDir(), "it's out.txt"), content: "50% of 'a'\\n\nend" };
    const call = pickWriterTool(responsesTools('exec_command(cmd,workdir)'), 'responses', file)!;
    execFileSync('sh', ['-c', String(call.arguments.cmd)]);
    expect(fs.readFileSync(file.path, 'utf8')).toBe(file.content);
  });
});

/** A CLI's first request and the one after its tool ran, per protocol: what agentTask keys on. */
const TURNS: Record<FakeRequest['protocol'], { tools: unknown; first: object; after: object }> = {
  anthropic: {
    tools: anthropicTools('Write(file_path,content)'),
    first: { messages: [{ role: 'user', content: [{ type: 'text', text: 'write it' }] }] },
    after: {
      messages: [
        { role: 'user', content: 'write it' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Write', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
      ],
    },
  },
  openai: {
    tools: openAITools('write(filePath,content)'),
    first: {
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'write it' },
      ],
    },
    after: {
      messages: [
        { role: 'user', content: 'write it' },
        { role: 'assistant', tool_calls: [] },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] },
      ],
    },
  },
  responses: {
    tools: responsesTools('exec_command(cmd)'),
    first: {
      input: [
        { type: 'message', role: 'developer', content: [] },
        { type: 'message', role: 'user', content: [] },
      ],
    },
    after: {
      input: [
        { type: 'message', role: 'user', content: [] },
        { type: 'function_call', call_id: 'c1' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
    },
  },
  gemini: {
    tools: geminiTools('write_file(file_path,content)'),
    first: { contents: [{ role: 'user', parts: [{ text: 'write it' }] }] },
    after: {
      contents: [
        { role: 'user', parts: [{ text: 'write it' }] },
        { role: 'model', parts: [{ functionCall: {} }] },
        { role: 'user', parts: [{ functionResponse: { name: 'write_file' } }] },
      ],
    },
  },
};

describe('agentTask', () => {
  const request = (protocol: FakeRequest['protocol'], body: object): FakeRequest => ({ path: '/', headers: {}, body, protocol, answered: null });

  it.each(Object.keys(TURNS) as Array<FakeRequest['protocol']>)(
    'over %s: a tool call first, the final text once a tool result came back, a short text without tools',
    (protocol) => {
      const { tools, first, after } = TURNS[protocol];
      const task = agentTask({ ...FILE, finalText: 'Done.' });
      expect(task(request(protocol, { ...first, tools }))).toEqual({ toolCall: pickWriterTool(tools, protocol, FILE), usage: { input: 1001, output: 51 } });
      expect(task(request(protocol, { ...after, tools }))).toEqual({ text: 'Done.', chunks: 3, usage: { input: 1002, output: 52 } });
      expect(task(request(protocol, first))).toEqual({ text: 'Writing a file', usage: { input: 1003, output: 53 } });
    },
  );

  it('a Responses tool output before the last user message is an earlier turn, not a result to answer', () => {
    const body = { input: [...(TURNS.responses.after as any).input, { type: 'message', role: 'user', content: [] }], tools: TURNS.responses.tools };
    expect(agentTask({ ...FILE, finalText: 'Done.' })(request('responses', body)).toolCall?.name).toBe('exec_command');
  });
});

/** The events of an SSE body: each one's name (or null) and its data, parsed unless it is `[DONE]`. */
function parseSse(text: string): Array<{ event: string | null; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      return { event: lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? null, data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}

type Events = ReturnType<typeof parseSse>;
interface ReadBack {
  call: { name: string; arguments: unknown };
  stop: string;
  usage: { input: number; output: number };
}

/** How a client puts a streamed tool call back together, per protocol. */
const READ_BACK: Record<FakeRequest['protocol'], (events: Events) => ReadBack> = {
  anthropic: (events) => {
    const block = events.find((event) => event.event === 'content_block_start')!.data.content_block;
    const json = events.map((event) => (event.data.delta?.type === 'input_json_delta' ? event.data.delta.partial_json : '')).join('');
    const started = events.find((event) => event.event === 'message_start')!.data.message;
    const delta = events.find((event) => event.event === 'message_delta')!.data;
    return {
      call: { name: block.name, arguments: JSON.parse(json) },
      stop: delta.delta.stop_reason,
      usage: { input: started.usage.input_tokens, output: delta.usage.output_tokens },
    };
  },
  openai: (events) => {
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => event.data);
    const parts = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    const name = parts.find((part: any) => part.function?.name)!.function.name;
    const json = parts.map((part: any) => part.function?.arguments ?? '').join('');
    const usage = chunks.at(-1)!.usage;
    const stop = chunks.map((chunk) => chunk.choices[0]?.finish_reason).find(Boolean);
    return { call: { name, arguments: JSON.parse(json) }, stop, usage: { input: usage.prompt_tokens, output: usage.completion_tokens } };
  },
  responses: (events) => {
    expect(events.map((event) => event.event)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.output_item.done',
      'response.completed',
    ]);
    const item = events[3].data.item;
    const usage = events[4].data.response.usage;
    return {
      call: { name: item.name, arguments: JSON.parse(item.arguments) },
      stop: item.type,
      usage: { input: usage.input_tokens, output: usage.output_tokens },
    };
  },
  gemini: (events) => {
    const candidate = events.at(-1)!.data.candidates[0];
    const usage = events.at(-1)!.data.usageMetadata;
    const call = candidate.content.parts[0].functionCall;
    return {
      call: { name: call.name, arguments: call.args },
      stop: candidate.finishReason,
      usage: { input: usage.promptTokenCount, output: usage.candidatesTokenCount },
    };
  },
};

describe('the fake provider over real HTTP, as coding-agent CLIs call it', () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(() => fake.close());

  /** A streamed request the way the CLIs send it: Claude's `?beta=true`, OpenAI's include_usage, Gemini's `alt=sse`. */
  const streamed = (protocol: FakeRequest['protocol']): [string, object] => {
    const { first, tools } = TURNS[protocol];
    if (protocol === 'anthropic') return [`${fake.anthropicURL}/messages?beta=true`, { model: 'claude-x', max_tokens: 100, stream: true, tools, ...first }];
    if (protocol === 'openai')
      return [`${fake.url}/chat/completions`, { model: 'fake-model', stream: true, stream_options: { include_usage: true }, tools, ...first }];
    if (protocol === 'responses') return [`${fake.url}/responses`, { model: 'gpt-x', stream: true, tools, ...first }];
    return [`${fake.geminiURL}/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, { tools, ...first }];
  };
  const post = async (url: string, body: object) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
  };

  const STOP = { anthropic: 'tool_use', openai: 'tool_calls', responses: 'function_call', gemini: 'STOP' };

  it.each(Object.keys(STOP) as Array<FakeRequest['protocol']>)(
    'streams a tool call over %s that parses back into the call, and records the usage it answered',
    async (protocol) => {
      const toolCall = { name: 'write_file', arguments: { file_path: '/w/out.txt', content: 'hello\n' } };
      fake.answer({ toolCall, usage: { input: 1234, output: 56 } });
      const answer = await post(...streamed(protocol));
      expect([answer.status, answer.type]).toEqual([200, 'text/event-stream']);
      expect(READ_BACK[protocol](parseSse(answer.text))).toEqual({ call: toolCall, stop: STOP[protocol], usage: { input: 1234, output: 56 } });
      expect(fake.requests.at(-1)).toMatchObject({ protocol, answered: { input: 1234, output: 56 } });
    },
  );

  it('answers a whole (not streamed) tool call in each protocol too', async () => {
    const toolCall = { name: 'Write', arguments: { file_path: '/w/out.txt', content: 'hi' } };
    fake.answer({ toolCall }, { toolCall }, { toolCall }, { toolCall });
    const anthropic = JSON.parse((await post(`${fake.anthropicURL}/messages`, { model: 'm', messages: [] })).text);
    expect([anthropic.stop_reason, anthropic.content[0]]).toEqual([
      'tool_use',
      { type: 'tool_use', id: expect.any(String), name: 'Write', input: toolCall.arguments },
    ]);
    const chat = JSON.parse((await post(`${fake.url}/chat/completions`, { model: 'm', messages: [] })).text).choices[0];
    expect([chat.finish_reason, chat.message.tool_calls[0].function]).toEqual(['tool_calls', { name: 'Write', arguments: JSON.stringify(toolCall.arguments) }]);
    const responses = JSON.parse((await post(`${fake.url}/responses`, { model: 'm', input: 'x' })).text).output[0];
    expect(responses).toMatchObject({ type: 'function_call', name: 'Write', arguments: JSON.stringify(toolCall.arguments), call_id: expect.any(String) });
    const gemini = JSON.parse((await post(`${fake.geminiURL}/models/g:generateContent`, { contents: [] })).text).candidates[0];
    expect(gemini.content.parts).toEqual([{ functionCall: { name: 'Write', args: toolCall.arguments } }]);
  });

  /** The text pieces a stream carries, per protocol. */
  const TEXT_PIECES: Record<FakeRequest['protocol'], (events: Events) => unknown[]> = {
    anthropic: (events) => events.filter((event) => event.data.delta?.type === 'text_delta').map((event) => event.data.delta.text),
    openai: (events) => events.filter((event) => event.data !== '[DONE]').map((event) => event.data.choices[0]?.delta?.content),
    responses: (events) => events.filter((event) => event.event === 'response.output_text.delta').map((event) => event.data.delta),
    gemini: (events) => events.map((event) => event.data.candidates[0].content.parts[0].text),
  };

  it.each(Object.keys(STOP) as Array<FakeRequest['protocol']>)('streams a text over %s in as many pieces as asked, one by default', async (protocol) => {
    const text = 'Done: I wrote out.txt containing hello.';
    fake.answer({ text, chunks: 3 }, { text });
    const pieces = (events: Events) => TEXT_PIECES[protocol](events).filter((piece) => typeof piece === 'string' && piece !== '');
    expect(pieces(parseSse((await post(...streamed(protocol))).text))).toEqual(['Done: I wrote', ' out.txt cont', 'aining hello.']);
    expect(pieces(parseSse((await post(...streamed(protocol))).text))).toEqual([text]);
  });

  it('ends a Responses text stream with the message item in output_item.done, which Codex reads', async () => {
    const text = 'Done: I wrote out.txt containing hello.';
    fake.answer({ text, chunks: 2 });
    const events = parseSse((await post(...streamed('responses'))).text);
    expect(events.find((event) => event.event === 'response.output_item.done')!.data.item).toMatchObject({
      type: 'message',
      content: [{ type: 'output_text', text }],
    });
  });

  it('answers the calls the CLIs make besides the model, without recording them', async () => {
    const before = fake.requests.length;
    const origin = fake.url.replace(/\/v1$/, '');
    expect((await fetch(`${origin}/api/hello`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${origin}/api/hello`)).status).toBe(200);
    expect(((await (await fetch(`${fake.url}/models`)).json()) as any).data[0].id).toBe('fake-model');
    const counted = JSON.parse(
      (await post(`${fake.anthropicURL}/messages/count_tokens?beta=true`, { model: 'm', messages: [{ role: 'user', content: 'hello there' }] })).text,
    );
    expect(counted.input_tokens).toBeGreaterThan(0);
    const gemini = JSON.parse((await post(`${fake.geminiURL}/models/gemini-2.5-flash:countTokens`, { contents: [] })).text);
    expect(gemini.totalTokens).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(before);
  });
});
