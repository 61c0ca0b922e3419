import { describe, expect, test } from "bun:test";
import { AmbiguousCommandError, ambiguity } from "../../../src/agent/shell/ambiguousText.ts";
import { bareEscalationArgv } from "../../../src/agent/shell/bareEscalation.ts";
import { bashParser } from "../../../src/agent/shell/bashParser.ts";
import { CommandJudge } from "../../../src/agent/shell/commandJudge.ts";
import type { ToolDefinition } from "../../../src/core/tools/toolDefinition.ts";

const parser = await bashParser();
const self = { user: "agentd", uid: 998, uidOf: (name: string) => ({ root: 0 })[name] };
const exec = { name: "exec_command" } as ToolDefinition;
const stdin = (comm: string) => ({ name: "write_stdin", inputReader: () => ({ comm, privileged: false }) }) as unknown as ToolDefinition;

/** The refusal a judged call gets, or undefined when it is judged (asked or not). */
async function refusal(judging: Promise<string[]>): Promise<AmbiguousCommandError | undefined> {
  try {
    await judging;
    return undefined;
  } catch (error) {
    if (error instanceof AmbiguousCommandError) return error;
    throw error;
  }
}

// The reviewer's attack: two lines on the card, one word to bash, two arguments to the old exec.
const ATTACK = "sudo touch /home/u/notes\\\n/root/x";

describe("text bash and the approval card read differently", () => {
  test.each([
    ["a backslash-newline", ATTACK],
    ["a backslash-CRLF", "ls a\\\r\nb"],
    ["a carriage return", "sudo rm /tmp/a\r/etc/passwd"],
    ["a CRLF line end", "ls\r\n"],
    ["a NUL", "sudo id\0"],
    ["a vertical tab", "ls a\vb"],
    ["a form feed", "ls a\fb"],
    ["an escape", "echo \x1b[2Kx"],
    ["a DEL", "ls a\x7f"],
    ["a next-line (U+0085)", "ls a\u0085b"],
    ["a line separator", "ls a\u2028b"],
    ["a paragraph separator", "ls a\u2029b"],
    ["a no-break space", "rm /tmp/a\u00a0/etc"],
    ["an ideographic space", "rm a\u3000b"],
    ["a lone surrogate", "touch a\ud800"],
  ])("is ambiguous: %s", (_, text) => expect(ambiguity(text)).toBeDefined());

  test.each(["ls -la\ncd /tmp && ls", "printf 'a\\nb'", "echo a\\\\ b", "echo \t tabbed", "touch café 日本", "echo 'multi\nline'"])(
    "is not: %j",
    (text) => expect(ambiguity(text)).toBeUndefined(),
  );

  test("says what it found and how to write it instead", () => {
    expect(ambiguity(ATTACK)).toContain("write it on one line");
    expect(ambiguity("a\u00a0b")).toContain("U+00A0");
  });
});

describe("the judge refuses ambiguous text before anyone is asked", () => {
  test("the original attack: refused with command_ambiguous, and never a bare escalation", async () => {
    const error = await refusal(new CommandJudge().judge("s", exec, { cmd: ATTACK }));
    expect(error?.code).toBe("command_ambiguous");
    expect(error?.message).toStartWith("Cannot run this command as written: it holds a backslash-newline, which bash removes");
    expect(bareEscalationArgv(parser, ATTACK, self)).toBeUndefined();
  });

  test("a working directory the card shows is checked too", async () => {
    expect((await refusal(new CommandJudge().judge("s", exec, { cmd: "ls", workdir: "/tmp\r/etc" })))?.code).toBe("command_ambiguous");
  });

  test("typed into a shell: also when the backslash and the newline come in two calls", async () => {
    const judge = new CommandJudge();
    expect(await judge.judge("s", stdin("bash"), { session_id: "t1", chars: "sudo touch /home/u/notes\\" })).toBeArray();
    const error = await refusal(judge.judge("s", stdin("bash"), { session_id: "t1", chars: "\r/root/x\r" }));
    expect(error?.message).toStartWith("Cannot type this into the terminal as written");
    // Line-editing keys change the line the shell reads.
    expect((await refusal(judge.judge("s", stdin("bash"), { session_id: "t2", chars: "ls\x1b[A\r" })))?.code).toBe("command_ambiguous");
  });

  test("typed into a program that is not a shell: its keys are its own", async () => {
    const judge = new CommandJudge();
    expect(await judge.judge("s", stdin("vim"), { session_id: "t1", chars: "\x1b:wq\\\r" })).toEqual([]);
  });
});
