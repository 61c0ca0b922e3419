import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bashParser } from "../../../src/agent/shell/bashParser.ts";
import { bareEscalationArgv } from "../../../src/agent/shell/bareEscalation.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";
import { seededRandom } from "../../support/seededRandom.ts";

afterAll(removeTempDirs);

const CASES = 4000;
const SEED = 0x5eed_2024;

const parser = await bashParser();
const self = { user: "agentd", uid: 998, uidOf: (name: string) => ({ root: 0, postgres: 115 })[name] };

/** Pieces a command is built from: mostly plain, with the characters where two readers of shell text part ways. */
const PLAIN = ["a", "b", "x1", "-n", "-u root", "é", "日本", "a.b", "a=b", "/etc/x", "%", "@", ":", ",", "+", "-", "_", "=", "{}", "]"];
const BLANKS = [" ", " ", " ", "  ", "\t"];
const TRICKY = [
  "'",
  '"',
  "'a b'",
  '"a b"',
  '""',
  "''",
  "\\",
  "\\\\",
  "\\ ",
  "\\'",
  '\\"',
  "\\$",
  "\\n",
  "\n",
  "\r",
  "\r\n",
  "\\\n",
  "\\\r\n",
  "$'a\\nb'",
  "$'\\''",
  "$'",
  '$"a"',
  "$",
  "$a",
  "$" + "{a}",
  "$(",
  "$((1))",
  "`",
  "(",
  ")",
  "~",
  "~/",
  "~root",
  "#",
  " #",
  "{a,b}",
  "{1..2}",
  "{",
  "}",
  "..",
  "*",
  "?",
  "[",
  "[a]",
  ";",
  ";;",
  "&",
  "&&",
  "|",
  "||",
  "<",
  ">",
  "!",
  "^",
  "@(a)",
  "\f",
  "\v",
  "\0",
  "\u00a0",
  "\u0085",
  "\u2028",
  "\u3000",
  "\u200b",
  "\u202e",
  "\x1b",
  "\x7f",
];

function commands(count: number, seed: number): string[] {
  const next = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    // Some commands are nearly plain, some mostly tricky: both sides of the line get tried.
    const tricky = pick([0.05, 0.15, 0.3, 0.6]);
    let rest = "";
    const pieces = 1 + Math.floor(next() * 10);
    for (let p = 0; p < pieces; p++) {
      const roll = next();
      rest += roll < tricky ? pick(TRICKY) : roll < tricky + (1 - tricky) / 3 ? pick(BLANKS) : pick(PLAIN);
    }
    out.push(`sudo ${rest}`);
  }
  return out;
}

/**
 * What bash makes of each command, in one bash: sudo is a function printing its words, every
 * other command is not found (and says so), globs that match nothing vanish (nullglob), so an
 * expansion always shows; a DEBUG trap lists the simple commands each text ran.
 */
const DRIVER = String.raw`
sudo() { printf 'S\0'; for w; do printf 'W%s\0' "$w"; done; }
command_not_found_handle() { printf 'X%s\0' "$1"; }
shopt -s nullglob
while IFS= read -r -d '' __text <&3; do
  ( trap 'printf "C%s\0" "$BASH_COMMAND"' DEBUG; eval "$__text"; wait; printf 'E\0' ) </dev/null 2>/dev/null
  printf 'Z\0'
done 3<"$1"
`;

interface BashReading {
  /** The words each call of sudo got. */
  calls: string[][];
  /** The simple commands bash ran for the text, besides the driver's own. */
  commands: string[];
  /** The text ran to its end (no syntax error or exit cut it short). */
  ended: boolean;
  /** A command other than sudo was looked up. */
  others: string[];
}

function bashReadings(texts: readonly string[]): BashReading[] {
  const dir = makeTempDir("agentd-fuzz-");
  writeFileSync(join(dir, "driver.sh"), DRIVER);
  writeFileSync(join(dir, "cases"), texts.map((text) => `${text}\0`).join(""));
  const run = Bun.spawnSync(["/bin/bash", "--norc", "--noprofile", join(dir, "driver.sh"), join(dir, "cases")], {
    cwd: dir,
    env: { HOME: "/nonexistent-home", PATH: "/nonexistent", LANG: "C.UTF-8" },
  });
  const records = new TextDecoder().decode(run.stdout).split("\0").slice(0, -1);
  const readings: BashReading[] = [];
  let current: BashReading = { calls: [], commands: [], ended: false, others: [] };
  for (const record of records) {
    const [kind, value] = [record[0], record.slice(1)];
    if (kind === "Z") {
      readings.push(current);
      current = { calls: [], commands: [], ended: false, others: [] };
    } else if (kind === "S") current.calls.push([]);
    else if (kind === "W") current.calls.at(-1)!.push(value);
    else if (kind === "C" && value !== 'eval "$__text"' && value !== "wait" && !value.startsWith("printf 'E")) current.commands.push(value);
    else if (kind === "E") current.ended = true;
    else if (kind === "X") current.others.push(value);
  }
  return readings;
}

/** Commands people write that must stay bare escalations, checked against bash like the random ones. */
const EVERYDAY = [
  "sudo systemctl restart nginx",
  "sudo -u postgres psql -c 'select 1'",
  'sudo sh -c "apt-get update && apt-get -y upgrade"',
  String.raw`sudo ls /mnt/My\ Drive`,
  String.raw`sudo find /var/log -name '*.gz' -exec rm {} \;`,
  String.raw`sudo printf "%s\n" "a\b" 'c"d' \\ "\$HOME"`,
  "sudo true # a comment",
  "sudo id &",
  "sudo id;",
  "sudo touch café 日本\n",
];

/** The commands agentd takes for bare escalations whose words bash reads otherwise, as JSON lines. */
function disagreements(texts: readonly string[]): string[] {
  const accepted = texts
    .map((text) => ({ text, argv: bareEscalationArgv(parser, text, self) }))
    .filter((c): c is { text: string; argv: string[] } => c.argv !== undefined);
  // Text bash cannot be handed (a NUL) must never be accepted: it could not even be sent below.
  expect(accepted.filter(({ text }) => text.includes("\0")).map((c) => JSON.stringify(c))).toEqual([]);
  const readings = bashReadings(accepted.map((c) => c.text));
  expect(readings.length).toBe(accepted.length);
  return accepted.flatMap(({ text, argv }, i) => {
    const bash = readings[i]!;
    const one = bash.ended && bash.commands.length === 1 && bash.calls.length === 1 && bash.others.length === 0;
    return one && JSON.stringify(bash.calls[0]) === JSON.stringify(argv.slice(1))
      ? []
      : [JSON.stringify({ text, agentd: argv.slice(1), bash })];
  });
}

test("everyday escalations are bare, with the words bash gives them", () => {
  expect(EVERYDAY.filter((text) => bareEscalationArgv(parser, text, self) === undefined)).toEqual([]);
  expect(disagreements(EVERYDAY)).toEqual([]);
});

test("every bare escalation agentd accepts has exactly the words real bash gives it", () => {
  const texts = commands(CASES, SEED);
  expect(disagreements(texts)).toEqual([]);
  // The fuzzing means something only if many commands were accepted, plain and not.
  expect(texts.filter((text) => bareEscalationArgv(parser, text, self) !== undefined).length).toBeGreaterThan(CASES / 5);
});
