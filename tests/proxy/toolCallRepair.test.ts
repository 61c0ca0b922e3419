import { describe, expect, test } from "bun:test";
import { repairArguments, repairCall, resolveToolName } from "../../src/proxy/translate/toolCallRepair.ts";
import { declaredTools } from "../../src/proxy/translate/toolCallTextSetup.ts";

const execSchema = { type: "object", properties: { cmd: { type: "string" }, timeout_ms: { type: "integer" } }, required: ["cmd"] };
const tools = declaredTools([
  { type: "function", function: { name: "exec_command", parameters: execSchema } },
  { type: "function", function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } } },
  { type: "function", function: { name: "Read_File", parameters: {} } },
]);

describe("tool names", () => {
  test("functions. prefix and case are repaired to the one declared name", () => {
    expect(resolveToolName("exec_command", tools)).toEqual({ name: "exec_command", repairs: [] });
    expect(resolveToolName("functions.exec_command", tools)).toEqual({ name: "exec_command", repairs: ["name_prefix"] });
    expect(resolveToolName("EXEC_COMMAND", tools)).toEqual({ name: "exec_command", repairs: ["name_case"] });
    expect(resolveToolName("functions.Exec_Command", tools)).toEqual({ name: "exec_command", repairs: ["name_prefix", "name_case"] });
  });
  test("never past one candidate: two names equal but for case, or none near, resolve to nothing", () => {
    expect(resolveToolName("READ_FILE", tools)).toBeUndefined();
    expect(resolveToolName("exec", tools)).toBeUndefined();
    expect(resolveToolName("tools.exec_command", tools)).toBeUndefined();
  });
});

describe("arguments against the schema", () => {
  const repair = (text: string) => repairArguments(text, execSchema);
  test("arguments encoded twice are decoded once", () => {
    expect(repair(JSON.stringify(JSON.stringify({ cmd: "ls" })))).toEqual({ arguments: '{"cmd":"ls"}', repairs: ["double_encoded"] });
  });
  test("a value holding the JSON of the expected object is unwrapped", () => {
    expect(repair('{"cmd":"{\\"cmd\\": \\"ls\\"}"}')).toEqual({ arguments: '{"cmd":"ls"}', repairs: ["nested_json"] });
    expect(repair('{"cmd":"{\\"cmd\\": \\"ls\\", \\"timeout_ms\\": 5}"}')).toEqual({
      arguments: '{"cmd":"ls","timeout_ms":5}',
      repairs: ["nested_json"],
    });
  });
  test("a near name for the one required parameter of its type is renamed", () => {
    expect(repair('{"command":"ls -la"}')).toEqual({ arguments: '{"cmd":"ls -la"}', repairs: ["param_name"] });
    expect(repair('{"command":"ls","timeout_ms":5}')).toEqual({ arguments: '{"cmd":"ls","timeout_ms":5}', repairs: ["param_name"] });
  });
  test("the repairs compose: twice-encoded arguments with a near name", () => {
    expect(repair(JSON.stringify(JSON.stringify({ command: "ls" })))).toEqual({
      arguments: '{"cmd":"ls"}',
      repairs: ["double_encoded", "param_name"],
    });
  });
  test("left alone: empty required values, valid arguments, and anything with more than one reading", () => {
    for (const text of [
      '{"cmd":""}',
      "{}",
      '{"cmd":"ls"}',
      // a JSON value that is not the expected object
      '{"cmd":"{\\"other\\": 1}"}',
      // the key is not near "cmd"
      '{"path":"ls"}',
      // two unknown keys: which one is meant?
      '{"command":"ls","shell":"bash"}',
      // the type differs from the required parameter's
      '{"command":5}',
      // cmd is present already
      '{"cmd":"ls","command":"pwd"}',
    ])
      expect(repair(text)).toEqual({ arguments: text, repairs: [] });
    const twoStrings = { type: "object", properties: { cmd: { type: "string" }, cwd: { type: "string" } }, required: ["cmd", "cwd"] };
    expect(repairArguments('{"command":"ls"}', twoStrings)).toEqual({ arguments: '{"command":"ls"}', repairs: [] });
  });
  test("arguments that are not an object, even decoded, are refused", () => {
    expect(repair("[1]")).toBeUndefined();
    expect(repair('"ls"')).toBeUndefined();
    expect(repair("not json")).toBeUndefined();
  });
  test("a whole call: name and arguments together", () => {
    expect(repairCall({ name: "functions.exec_command", arguments: '{"command":"ls"}' }, tools)).toEqual({
      name: "exec_command",
      arguments: '{"cmd":"ls"}',
      repairs: ["name_prefix", "param_name"],
    });
    expect(repairCall({ name: "undeclared", arguments: "{}" }, tools)).toBeUndefined();
  });
});
