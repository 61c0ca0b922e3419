/**
 * Raw model answers with tool calls written as text, one family's format each: the strings come
 * from vLLM's tool-parser tests (tests/tool_parsers/test_*_tool_parser.py) and the model cards,
 * plus negative controls that must stay text byte for byte. Shared by the pure parser tests and
 * the tests through the proxy.
 */

export interface TextCallCase {
  family: string;
  label: string;
  text: string;
  /** The calls expected, arguments as objects; empty for a negative control. */
  calls: { name: string; arguments: Record<string, unknown> }[];
  /** The text left once the calls are taken out (the whole text for a negative control). */
  rest: string;
}

const obj = { type: "object" };
/** The tools every case's request declares. */
export const CASE_TOOLS = [
  tool("get_current_weather", {
    ...obj,
    properties: { city: { type: "string" }, state: { type: "string" }, unit: { type: "string" } },
    required: ["city"],
  }),
  tool("get_weather", { ...obj, properties: { city: { type: "string" }, location: { type: "string" }, metric: { type: "string" } } }),
  tool("add", { ...obj, properties: { a: { type: "number" }, b: { type: "number" } } }),
  tool("add_this_and_that", { ...obj, properties: { a: { type: "number" }, b: { type: "number" } } }),
  tool("multiply", { ...obj, properties: { a: { type: "number" }, b: { type: "number" } } }),
  tool("searchTool", { ...obj, properties: { query: { type: "string" } } }),
  tool("getOpenIncidentsTool", { ...obj, properties: {} }),
  tool("register_user", { ...obj, properties: { name: { type: "string" }, age: { type: "integer" } } }),
  tool("calculate_area", {
    ...obj,
    properties: { shape: { type: "string" }, dimensions: { type: "object" }, precision: { type: "integer" } },
  }),
];

function tool(name: string, parameters: Record<string, unknown>) {
  return { type: "function" as const, function: { name, parameters } };
}

const weather = (city: string, state: string, unit: string) => ({ city, state, unit });
const DS = {
  begin: "<｜tool▁calls▁begin｜>",
  end: "<｜tool▁calls▁end｜>",
  call: "<｜tool▁call▁begin｜>",
  callEnd: "<｜tool▁call▁end｜>",
  sep: "<｜tool▁sep｜>",
};
const KIMI = {
  begin: "<|tool_calls_section_begin|>",
  end: "<|tool_calls_section_end|>",
  call: "<|tool_call_begin|>",
  arg: "<|tool_call_argument_begin|>",
  callEnd: "<|tool_call_end|>",
};

export const CASES: TextCallCase[] = [
  // Hermes / Qwen 2.5 (vLLM test_hermes_tool_parser.py, Qwen's function-calling docs)
  {
    family: "hermes",
    label: "one call",
    text: '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}\n</tool_call>',
    calls: [{ name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") }],
    rest: "",
  },
  {
    family: "hermes",
    label: "content before, two calls",
    text: 'Let me check both.\n<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}\n</tool_call>\n<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}\n</tool_call>',
    calls: [
      { name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") },
      { name: "get_current_weather", arguments: weather("Orlando", "FL", "fahrenheit") },
    ],
    rest: "Let me check both.\n\n",
  },
  {
    family: "hermes",
    label: "no closing tag at the end",
    text: '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}\n',
    calls: [{ name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") }],
    rest: "",
  },
  {
    family: "hermes",
    label: "arguments as a JSON string",
    text: '<tool_call>{"name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}</tool_call>',
    calls: [{ name: "add", arguments: { a: 1, b: 2 } }],
    rest: "",
  },
  // xLAM / bare JSON lists (vLLM test_xlam_tool_parser.py)
  {
    family: "json_list",
    label: "bare list, two calls",
    text: '[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}, {"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}]',
    calls: [
      { name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") },
      { name: "get_current_weather", arguments: weather("Orlando", "FL", "fahrenheit") },
    ],
    rest: "",
  },
  {
    family: "json_list",
    label: "fenced list after prose",
    text: 'I\'ll help you with that.\n```json\n[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}]\n```',
    calls: [{ name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") }],
    rest: "I'll help you with that.\n",
  },
  {
    family: "json_list",
    label: "list inside <tool_call>",
    text: '<tool_call>[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}]</tool_call>',
    calls: [{ name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") }],
    rest: "",
  },
  // Mistral before tokenizer v11 (vLLM test_mistral_tool_parser.py, pre_v11)
  {
    family: "mistral_v1",
    label: "single",
    text: '[TOOL_CALLS][{"name": "add", "arguments":{"a": 3.5, "b": 4}}]',
    calls: [{ name: "add", arguments: { a: 3.5, b: 4 } }],
    rest: "",
  },
  {
    family: "mistral_v1",
    label: "content before, two calls",
    text: 'Hello[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "get_current_weather", "arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}}]',
    calls: [
      { name: "add", arguments: { a: 1, b: 2 } },
      { name: "get_current_weather", arguments: weather("San Francisco", "CA", "celsius") },
    ],
    rest: "Hello",
  },
  // Mistral from tokenizer v11 (vLLM test_mistral_tool_parser.py, v11; [ARGS] as Magistral/Devstral write it)
  {
    family: "mistral_v11",
    label: "name then arguments",
    text: '[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}',
    calls: [{ name: "add_this_and_that", arguments: { a: 3.5, b: 4 } }],
    rest: "",
  },
  {
    family: "mistral_v11",
    label: "two markers",
    text: '[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}',
    calls: [
      { name: "add", arguments: { a: 3.5, b: 4 } },
      { name: "multiply", arguments: { a: 3, b: 6 } },
    ],
    rest: "",
  },
  {
    family: "mistral_v11",
    label: "[ARGS] separator",
    text: '[TOOL_CALLS]get_current_weather[ARGS]{"city": "San Francisco", "state": "CA", "unit": "celsius"}',
    calls: [{ name: "get_current_weather", arguments: weather("San Francisco", "CA", "celsius") }],
    rest: "",
  },
  // Llama 3.1-3.3 JSON (vLLM test_llama3_json_tool_parser.py, Meta's model card)
  {
    family: "llama3_json",
    label: "whole answer",
    text: '{"name": "get_current_weather", "parameters": {"city": "San Francisco", "state": "CA", "unit": "celsius"}}',
    calls: [{ name: "get_current_weather", arguments: weather("San Francisco", "CA", "celsius") }],
    rest: "",
  },
  {
    family: "llama3_json",
    label: "two joined by ;",
    text: '{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}',
    calls: [
      { name: "searchTool", arguments: { query: "test1" } },
      { name: "getOpenIncidentsTool", arguments: {} },
    ],
    rest: "",
  },
  {
    family: "llama3_python_tag",
    label: "<|python_tag|>",
    text: '<|python_tag|>{"name": "get_current_weather", "parameters": {"city": "LA", "state": "CA", "unit": "celsius"}}',
    calls: [{ name: "get_current_weather", arguments: weather("LA", "CA", "celsius") }],
    rest: "",
  },
  {
    family: "llama3_python_tag",
    label: "two joined by ;",
    text: '<|python_tag|>{"name": "add", "parameters": {"a": 1, "b": 2}}; {"name": "multiply", "parameters": {"a": 3, "b": 4}}',
    calls: [
      { name: "add", arguments: { a: 1, b: 2 } },
      { name: "multiply", arguments: { a: 3, b: 4 } },
    ],
    rest: "",
  },
  // Pythonic and Llama 4 (vLLM test_pythonic_tool_parser.py, test_llama4_pythonic_tool_parser.py)
  {
    family: "pythonic",
    label: "one call",
    text: "[get_weather(city='San Francisco', metric='celsius')]",
    calls: [{ name: "get_weather", arguments: { city: "San Francisco", metric: "celsius" } }],
    rest: "",
  },
  {
    family: "pythonic",
    label: "literals of every kind, two calls",
    text: "[get_weather(city='San Francisco', metric='celsius'), register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])]",
    calls: [
      { name: "get_weather", arguments: { city: "San Francisco", metric: "celsius" } },
      {
        name: "register_user",
        arguments: {
          name: "John Doe",
          age: 37,
          address: { city: "San Francisco", state: "CA" },
          role: null,
          passed_test: true,
          aliases: ["John", "Johnny"],
        },
      },
    ],
    rest: "",
  },
  {
    family: "llama4_pythonic",
    label: "<|python_start|>",
    text: '<|python_start|>[get_weather(city="Paris", metric="celsius")]<|python_end|>',
    calls: [{ name: "get_weather", arguments: { city: "Paris", metric: "celsius" } }],
    rest: "",
  },
  {
    family: "llama4_pythonic",
    label: "two calls, escaped quote",
    text: '<|python_start|>[get_weather(city="Paris", metric="celsius"), searchTool(query="it\'s \\"quoted\\"")]<|python_end|>',
    calls: [
      { name: "get_weather", arguments: { city: "Paris", metric: "celsius" } },
      { name: "searchTool", arguments: { query: 'it\'s "quoted"' } },
    ],
    rest: "",
  },
  // DeepSeek V3 / R1 (vLLM test_deepseekv3_tool_parser.py)
  {
    family: "deepseek_v3",
    label: "fenced arguments",
    text: `${DS.begin}${DS.call}function${DS.sep}get_weather\n\`\`\`json\n{"location": "Tokyo"}\n\`\`\`${DS.callEnd}${DS.end}`,
    calls: [{ name: "get_weather", arguments: { location: "Tokyo" } }],
    rest: "",
  },
  {
    family: "deepseek_v3",
    label: "prose before, newlines between markers",
    text: `Checking.\n\n${DS.begin}\n${DS.call}function${DS.sep}get_weather\n\`\`\`json\n{"location": "北京"}\n\`\`\`\n${DS.callEnd}\n${DS.end}`,
    calls: [{ name: "get_weather", arguments: { location: "北京" } }],
    rest: "Checking.\n\n",
  },
  // DeepSeek V3.1 (vLLM test_deepseekv31_tool_parser.py)
  {
    family: "deepseek_v31",
    label: "one call",
    text: `${DS.begin}${DS.call}get_weather${DS.sep}{"city": "Paris"}${DS.callEnd}${DS.end}`,
    calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
    rest: "",
  },
  {
    family: "deepseek_v31",
    label: "two calls",
    text: `Sure.${DS.begin}${DS.call}get_weather${DS.sep}{"city": "Paris"}${DS.callEnd}${DS.call}add${DS.sep}{"a": 1, "b": 2}${DS.callEnd}${DS.end}`,
    calls: [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "add", arguments: { a: 1, b: 2 } },
    ],
    rest: "Sure.",
  },
  // Qwen3-Coder (vLLM test_qwen3coder_tool_parser.py)
  {
    family: "qwen3_coder",
    label: "string parameters",
    text: "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
    calls: [{ name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") }],
    rest: "",
  },
  {
    family: "qwen3_coder",
    label: "typed parameters, prose before",
    text: 'I\'ll calculate the area.\n<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n{"width": 10, "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>',
    calls: [{ name: "calculate_area", arguments: { shape: "rectangle", dimensions: { width: 10, height: 20 }, precision: 2 } }],
    rest: "I'll calculate the area.\n",
  },
  {
    family: "qwen3_coder",
    label: "without the <tool_call> wrapper",
    text: "Sure.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
    calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
    rest: "Sure.\n",
  },
  // GLM-4.5 / 4.7 (vLLM test_glm4_moe_tool_parser.py, test_glm47_moe_tool_parser.py)
  {
    family: "glm45",
    label: "newline layout",
    text: "<tool_call>get_current_weather\n<arg_key>city</arg_key>\n<arg_value>Dallas</arg_value>\n<arg_key>state</arg_key>\n<arg_value>TX</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>fahrenheit</arg_value>\n</tool_call>",
    calls: [{ name: "get_current_weather", arguments: weather("Dallas", "TX", "fahrenheit") }],
    rest: "",
  },
  {
    family: "glm45",
    label: "GLM-4.7 compact, typed",
    text: "Computing.<tool_call>calculate_area<arg_key>shape</arg_key><arg_value>square</arg_value><arg_key>precision</arg_key><arg_value>3</arg_value></tool_call>",
    calls: [{ name: "calculate_area", arguments: { shape: "square", precision: 3 } }],
    rest: "Computing.",
  },
  // Kimi K2 (vLLM test_kimi_k2_tool_parser.py)
  {
    family: "kimi_k2",
    label: "one call",
    text: `I'll check. ${KIMI.begin}${KIMI.call}functions.get_weather:0 ${KIMI.arg}{"city": "Beijing"}${KIMI.callEnd}${KIMI.end}`,
    calls: [{ name: "get_weather", arguments: { city: "Beijing" } }],
    rest: "I'll check. ",
  },
  {
    family: "kimi_k2",
    label: "parallel, no prefix",
    text: `${KIMI.begin}${KIMI.call}functions.get_weather:0 ${KIMI.arg}{"city": "Beijing"}${KIMI.callEnd}${KIMI.call}get_weather:1 ${KIMI.arg}{"city": "Shanghai"}${KIMI.callEnd}${KIMI.end}`,
    calls: [
      { name: "get_weather", arguments: { city: "Beijing" } },
      { name: "get_weather", arguments: { city: "Shanghai" } },
    ],
    rest: "",
  },
  {
    family: "kimi_k2",
    label: "multiline JSON arguments",
    text: `Formatted. ${KIMI.begin}${KIMI.call}functions.calculate_area:0 ${KIMI.arg}{\n  "shape": "square",\n  "precision": 2\n}${KIMI.callEnd}${KIMI.end}`,
    calls: [{ name: "calculate_area", arguments: { shape: "square", precision: 2 } }],
    rest: "Formatted. ",
  },
  // MiniMax M2 (vLLM test_minimax_m2_tool_parser.py)
  {
    family: "minimax_m2",
    label: "one call",
    text: 'Let me check the weather. <minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">Tokyo</parameter>\n</invoke>\n</minimax:tool_call>',
    calls: [{ name: "get_weather", arguments: { location: "Tokyo" } }],
    rest: "Let me check the weather. ",
  },
  {
    family: "minimax_m2",
    label: "two invokes, typed",
    text: '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n<invoke name="calculate_area">\n<parameter name="shape">circle</parameter>\n<parameter name="dimensions">{"radius": 2}</parameter>\n</invoke>\n</minimax:tool_call>',
    calls: [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "calculate_area", arguments: { shape: "circle", dimensions: { radius: 2 } } },
    ],
    rest: "",
  },
  {
    family: "minimax_m1",
    label: "JSON lines in <tool_calls>",
    text: '<tool_calls>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_calls>',
    calls: [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "add", arguments: { a: 1, b: 2 } },
    ],
    rest: "",
  },
  // Granite 3.x (vLLM test_granite_tool_parser.py)
  {
    family: "granite",
    label: "one call",
    text: '<|tool_call|>[{"name": "get_current_weather", "arguments": {"city": "Boston", "state": "MA", "unit": "celsius"}}]',
    calls: [{ name: "get_current_weather", arguments: weather("Boston", "MA", "celsius") }],
    rest: "",
  },
  {
    family: "granite",
    label: "two calls",
    text: '<|tool_call|>[{"name": "get_current_weather", "arguments": {"city": "Boston", "state": "MA", "unit": "celsius"}}, {"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "celsius"}}]',
    calls: [
      { name: "get_current_weather", arguments: weather("Boston", "MA", "celsius") },
      { name: "get_current_weather", arguments: weather("Orlando", "FL", "celsius") },
    ],
    rest: "",
  },
  // gpt-oss harmony, as rendered by openai_harmony (vLLM test_openai_tool_parser.py)
  {
    family: "harmony",
    label: "analysis then a call",
    text: '<|channel|>analysis<|message|>User asks the weather in Tokyo. We need get_current_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{"city": "Tokyo"}<|call|>',
    calls: [{ name: "get_current_weather", arguments: { city: "Tokyo" } }],
    rest: "<|channel|>analysis<|message|>User asks the weather in Tokyo. We need get_current_weather.<|end|>",
  },
  {
    family: "harmony",
    label: "recipient before the channel",
    text: '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"location": "Tokyo"}<|call|>',
    calls: [{ name: "get_weather", arguments: { location: "Tokyo" } }],
    rest: "",
  },
  // Negative controls: none of these is a call.
  ...[
    "I would call get_current_weather with city Dallas to check.",
    '<tool_call>{"name": "get_current_weather", "arguments": </tool_call>',
    '<tool_call>{"name": "rm_everything", "arguments": {}}</tool_call>',
    "```bash\nls -la\n```",
    '{"name": "Bob", "age": 3}',
    "[1, 2, 3]",
    "[see the docs(here)]",
    "[TOOL_CALLS] not json at all",
    "<|channel|>final<|message|>It is sunny.<|return|>",
    "<tool_call>unterminated",
    '```json\n{"name": "config", "value": 3}\n```',
    "<function=get_weather>\n<parameter=city>Paris</function>",
    '<minimax:tool_call>\n<invoke name="get_weather">\nnot a parameter\n</invoke>\n</minimax:tool_call>',
  ].map((text, i) => ({ family: "negative", label: `control ${i + 1}`, text, calls: [], rest: text })),
];
