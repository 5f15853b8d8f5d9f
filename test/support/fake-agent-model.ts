import type { FakeAnswer, FakeRequest, FakeToolCall, FakeUsage } from './fake-provider';

/**
 * A scripted model that drives a real coding-agent CLI through one task: write a file, then say
 * it is done. It is stateless per request, so it works whatever the CLI resends or retries:
 * a request without tools (opencode's title) gets a short text, a request whose last turn holds a
 * tool result gets the final text (streamed in three pieces, as CLIs that print deltas then show),
 * and any other request gets one call of the CLI's own writer tool, picked from the tools the
 * request declares.
 */
export interface AgentTaskOptions {
  /** The absolute path of the file to write. */
  path: string;
  content: string;
  finalText: string;
  /** The usage of the n-th call (from 1); by default input 1000+n and output 50+n, so totals show which CLIs sum. */
  usage?: (n: number) => FakeUsage;
}

export interface FileToWrite {
  path: string;
  content: string;
}

type Protocol = FakeRequest['protocol'];

/** A declared function tool, reduced to what the picker reads: its name and its parameters' names. */
export interface DeclaredTool {
  name: string;
  properties: string[];
}

/** Writer tools by name, in order of preference; `Write` serves Claude (`file_path`) and Continue (`filepath`). */
const WRITERS = ['Write', 'write_file', 'write', 'create', 'editor'];
/** Shell tools and the parameter that takes the command, for CLIs offering no writer (Codex with an unknown model). */
const SHELLS: Array<[string, string]> = [
  ['exec_command', 'cmd'],
  ['bash', 'command'],
  ['run_shell_command', 'command'],
  ['Bash', 'command'],
];
/** Content-like names are matched first: Copilot's `create{path, file_text}` must not take the path as content. */
const CONTENT_NAMES = ['content', 'text', 'file_text', 'new_text'];
const PATH_NAMES = ['file_path', 'filePath', 'path', 'filepath', 'absolute_path'];

export function agentTask(options: AgentTaskOptions): (request: FakeRequest) => FakeAnswer {
  const usageOf = options.usage ?? ((n: number) => ({ input: 1000 + n, output: 50 + n }));
  let calls = 0;
  return (request) => {
    calls += 1;
    const usage = usageOf(calls);
    const tools: unknown = request.body?.tools;
    if (declaredTools(tools, request.protocol).length === 0) return { text: 'Writing a file', usage };
    if (endsWithToolResult(request.body, request.protocol)) return { text: options.finalText, chunks: 3, usage };
    const call = pickWriterTool(tools, request.protocol, options);
    if (call === null) {
      const names = declaredTools(tools, request.protocol).map((tool) => tool.name);
      return { text: `No tool to write a file with among: ${names.join(', ')}`, usage };
    }
    return { toolCall: call, usage };
  };
}

/**
 * The call that writes `file` with one of the declared tools (a request body's `tools`, in the
 * protocol's own form), or null when none can: a writer tool by name, else a shell tool running printf.
 */
export function pickWriterTool(tools: unknown, protocol: Protocol, file: FileToWrite): FakeToolCall | null {
  const declared = declaredTools(tools, protocol);
  for (const name of WRITERS) {
    const tool = declared.find((candidate) => candidate.name === name);
    const contentName = tool?.properties.find((property) => CONTENT_NAMES.includes(property));
    const pathName = tool?.properties.find((property) => !CONTENT_NAMES.includes(property) && PATH_NAMES.includes(property));
    if (tool && contentName && pathName) return { name, arguments: { [pathName]: file.path, [contentName]: file.content } };
  }
  for (const [name, parameter] of SHELLS) {
    const tool = declared.find((candidate) => candidate.name === name);
    if (tool?.properties.includes(parameter)) return { name, arguments: { [parameter]: printfCommand(file) } };
  }
  return null;
}

/** The function tools a request declares; other kinds (Responses' `namespace`, `web_search`, `custom`) are ignored. */
export function declaredTools(tools: unknown, protocol: Protocol): DeclaredTool[] {
  if (!Array.isArray(tools)) return [];
  const entries: any[] = tools;
  const declared = (name: unknown, schema: any): DeclaredTool[] =>
    typeof name === 'string' ? [{ name, properties: Object.keys(schema?.properties ?? {}) }] : [];
  switch (protocol) {
    case 'anthropic':
      return entries.flatMap((tool) => declared(tool?.name, tool?.input_schema));
    case 'openai':
      return entries.flatMap((tool) => (tool?.type === 'function' ? declared(tool.function?.name, tool.function?.parameters) : []));
    case 'responses':
      return entries.flatMap((tool) => (tool?.type === 'function' ? declared(tool.name, tool.parameters) : []));
    case 'gemini':
      return entries.flatMap((tool) =>
        ((tool?.functionDeclarations ?? []) as any[]).flatMap((declaration) =>
          declared(declaration?.name, declaration?.parametersJsonSchema ?? declaration?.parameters),
        ),
      );
  }
}

/** Whether the request's last turn carries a tool's result, i.e. the tool call has been run. */
export function endsWithToolResult(body: any, protocol: Protocol): boolean {
  switch (protocol) {
    case 'anthropic': {
      const last = (body?.messages ?? []).at(-1);
      return last?.role === 'user' && Array.isArray(last.content) && last.content.some((block: any) => block?.type === 'tool_result');
    }
    case 'openai':
      return (body?.messages ?? []).at(-1)?.role === 'tool';
    case 'responses': {
      const input: any[] = Array.isArray(body?.input) ? body.input : [];
      const lastUser = input.findLastIndex((item) => item?.role === 'user');
      return input.slice(lastUser + 1).some((item) => item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output');
    }
    case 'gemini': {
      const parts: any[] = (body?.contents ?? []).at(-1)?.parts ?? [];
      return parts.some((part) => part?.functionResponse !== undefined);
    }
  }
}

/** A POSIX shell command writing the content exactly (printf '%s' leaves `%` and backslashes alone). */
function printfCommand(file: FileToWrite): string {
  const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  return `printf '%s' ${quote(file.content)} > ${quote(file.path)}`;
}
