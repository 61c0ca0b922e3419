import { describe, expect, test } from "bun:test";
import { bashParser } from "../../../src/agent/shell/bashParser.ts";
import { isBareEscalation } from "../../../src/agent/shell/bareEscalation.ts";

const parser = await bashParser();

describe("only a bare escalation starts without no_new_privs", () => {
  test.each([
    "sudo systemctl restart nginx",
    "sudo -n /usr/bin/id",
    "/usr/bin/sudo -u postgres psql -c 'select 1'",
    'sudo sh -c "apt-get update && apt-get -y upgrade"',
    "doas rc-service nginx restart",
    "sudo true # a comment",
    // In the background it is still sudo alone.
    "sudo id &",
  ])("bare: %s", (text) => expect(isBareEscalation(parser, text)).toBe(true));

  test.each([
    "git -C ~/repo status --short && sudo -n /usr/bin/id",
    "cd /etc; sudo cat shadow",
    "sudo id | tee out",
    "sudo id > out",
    "FOO=1 sudo id",
    "sudo $(cat cmd)",
    "sudo `cat cmd`",
    "sudo $CMD",
    "sudo id*",
    "./sudo id",
    "/tmp/sudo id",
    "/home/agentd/bin/sudo id",
    "(sudo id)",
    "bash ./script.sh",
    "systemctl status nginx",
    "sudo id\nsudo whoami",
    "sudo 'unterminated",
  ])("not bare: %s", (text) => expect(isBareEscalation(parser, text)).toBe(false));
});
