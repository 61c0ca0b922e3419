import { describe, expect, test } from "bun:test";
import { bashParser } from "../../../src/agent/shell/bashParser.ts";
import { bareEscalationArgv } from "../../../src/agent/shell/bareEscalation.ts";

const parser = await bashParser();
const passwd: Record<string, number> = { root: 0, postgres: 115, agentd: 998, "agentd-alias": 998 };
const self = { user: "agentd", uid: 998, uidOf: (name: string) => passwd[name] };
const isBareEscalation = (p: typeof parser, text: string) => bareEscalationArgv(p, text, self) !== undefined;

describe("only a bare escalation starts without no_new_privs", () => {
  test.each([
    "sudo systemctl restart nginx",
    "sudo -n /usr/bin/id",
    "/usr/bin/sudo -u postgres psql -c 'select 1'",
    'sudo sh -c "apt-get update && apt-get -y upgrade"',
    "sudo '~/literal'",
    "doas rc-service nginx restart",
    "sudo true # a comment",
    "sudo -n -u postgres psql",
    "sudo -u postgres -g users psql",
    "sudo -uroot id",
    "pkexec --user root id",
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
    // What starts a program as agentd's own user, or runs an editor, a shell or a server for it.
    "sudoedit /etc/motd",
    "sudo -e /etc/motd",
    "sudo -E env",
    "sudo --preserve-env=PATH id",
    "sudo -A id",
    "sudo -u agentd git status",
    "sudo -u#998 id",
    "sudo -nu root id",
    "setpriv -- sh -c 'sudo -n id'",
    "capsh -- -c id",
    "su -c id agentd",
    "tmux new-session -d -s w",
    "sudo ~/x.sh",
    "sudo ~root/x.sh",
    "sudo dd if=/tmp/p of=~/crontab.bak",
    "sudo cp a PATH=x:~/bin",
    // agentd's own user however spelled, an unknown one, or a group alone (runs as agentd's user).
    "sudo -g users git status",
    'sudo -u "#01001" id',
    "sudo -u 998 id",
    "sudo -u agentd-alias id",
    "sudo -u nosuchuser id",
    "doas -u 01001 id",
    // Text agentd's parser and bash read differently (found by bareEscalationFuzz.test.ts).
    "sudo touch /home/u/notes\\\n/root/x",
    "sudo touch a\rb",
    "sudo touch a\fb",
    "sudo touch a\u0085b",
    "sudo touch a$",
    "sudo touch \\ a",
    "sudo touch a\\\tb",
    "sudo touch ]\\[a]",
    "sudo id;;",
    "sudo id\\",
    "sudo {a,b}",
    "sudo {a}",
  ])("not bare: %s", (text) => expect(isBareEscalation(parser, text)).toBe(false));
});
