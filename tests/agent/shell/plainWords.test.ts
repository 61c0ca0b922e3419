import { expect, test } from "bun:test";
import { plainWords } from "../../../src/agent/shell/plainWords.ts";

// What bash itself reads is the reference in bareEscalationFuzz.test.ts; these show the rules.
test.each([
  ["sudo id", ["sudo", "id"]],
  ["  sudo\t-n  id  ", ["sudo", "-n", "id"]],
  [String.raw`sudo ls My\ Drive \$HOME \~`, ["sudo", "ls", "My Drive", "$HOME", "~"]],
  [`sudo printf '%s $x "q"' "a\\b \\" \\$ \\\\" ''`, ["sudo", "printf", '%s $x "q"', 'a\\b " $ \\', ""]],
  ["sudo find . -exec rm {} ;", ["sudo", "find", ".", "-exec", "rm", "{}"]],
  ["sudo a#b # comment\n\n", ["sudo", "a#b"]],
  ["sudo id & # background", ["sudo", "id"]],
  ["sudo 'two\nlines'", ["sudo", "two\nlines"]],
])("%j is %j", (text, words) => expect(plainWords(text)).toEqual(words));

test.each([
  "",
  "# only a comment",
  "sudo $HOME",
  "sudo a$",
  'sudo "$x"',
  "sudo `id`",
  "sudo ~/x",
  "sudo *.log",
  "sudo a?",
  "sudo [ab]",
  "sudo {a,b}",
  "sudo {a}",
  "sudo {}}",
  "sudo $'a'",
  "sudo 'open",
  'sudo "open',
  "sudo a\\",
  "sudo a\\\nb",
  'sudo "a\\\nb"',
  "sudo a\\\tb",
  "sudo id; id",
  "sudo id;;",
  "sudo id && id",
  "sudo id | cat",
  "sudo id > out",
  "sudo <in id",
  "sudo (id)",
  "sudo id\nid",
  "sudo a\rb",
  "sudo a\0b",
  "sudo !",
  "; sudo id",
])("%j is not plain", (text) => expect(plainWords(text)).toBeUndefined());
