import { describe, expect, test } from "bun:test";
import { Redactor, redactSecrets, redactText } from "../../../src/core/redaction/index.ts";
import { seededRandom } from "../../support/seededRandom.ts";

describe("Redactor", () => {
  test("hides the exact secrets agentd holds, then anything key-shaped", () => {
    const redactor = new Redactor(["my-provider-key-123", undefined, "short"]);
    const line =
      '{"event":"upstream.error","api_key":"abc123xyz","message":"key my-provider-key-123 rejected","auth":"Authorization: Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"}';
    const out = redactor.redact(line);
    expect(out).not.toContain("my-provider-key-123");
    expect(out).not.toContain("abc123xyz");
    expect(out).not.toContain("eyJhbGciOi");
    expect(out).toContain('"event":"upstream.error"');
    // Secrets shorter than 6 characters are too likely to be ordinary words.
    expect(redactor.redact("a short answer")).toBe("a short answer");
  });
});

test("a secret-looking assignment never swallows the command after a shell operator", () => {
  expect(redactText("TOKEN=x;sudo -n /usr/bin/id")).toBe("TOKEN=[redacted];sudo -n /usr/bin/id");
  expect(redactText(`echo 'API_KEY="'; sudo -n id > pwned; echo '"'`)).toContain("sudo -n id > pwned");
  expect(redactText("TOKEN=abc&&sudo id")).toBe("TOKEN=[redacted]&&sudo id");
  expect(redactText('export API_KEY="sk-abc def"')).toBe("export API_KEY=[redacted]");
});

test("a string holding JSON (a tool call's arguments): a secret quoted with \\\" is hidden whole, and the text stays the JSON it was", () => {
  const args = (cmd: string) => JSON.stringify({ cmd, yield_time_ms: 5000 });
  const redacted = redactSecrets({
    arguments: args('export DB_PASSWORD="correct horse battery" && ./deploy --password "two words" now'),
    nested: JSON.stringify([args('export DB_PASSWORD="correct horse battery" && x')]),
  });
  const expected = args("export DB_PASSWORD=[redacted] && ./deploy --password [redacted] now");
  expect(redacted).toEqual({ arguments: expected, nested: JSON.stringify([args("export DB_PASSWORD=[redacted] && x")]) });
  // Still no further than a shell operator, nor past the string's end: the command after it stays in view.
  const kept = (cmd: string) => JSON.parse(redactSecrets({ a: args(cmd) }).a).cmd as string;
  expect(kept(`echo 'API_KEY="'; sudo -n id > pwned; echo '"'`)).toContain("; sudo -n id > pwned");
  expect(kept('PASSWORD="x; sudo id"')).toBe('PASSWORD=[redacted]; sudo id"');
  expect(kept("mysql -u app -pS3cret")).toBe("mysql -u app -p[redacted]");
  expect(kept("TOKEN=abc\\")).toBe("TOKEN=[redacted]\\");
  // A key named like a secret hides its first word, as in text: a command after it stays.
  expect(redactSecrets({ cmd: '{"password":"x $(sudo id)"}' }).cmd).toBe('{"password":"[redacted] $(sudo id)"}');
  // Every redacted string is still the JSON it was, with the same keys.
  for (const cmd of ['A_TOKEN=\\"x y\\" z', 'PASSWORD=\\"', "--api-key \\", 'x --password="a b" y', "PASSWORD='a\"b' c"]) {
    const text = redactSecrets({ a: JSON.stringify({ cmd, n: 1 }) }).a;
    expect(Object.keys(JSON.parse(text))).toEqual(["cmd", "n"]);
  }
  // A JSON field named like a secret stops where an assignment's value does: at an operator, or an escaped quote.
  expect(redactText("echo password:x;sudo id")).toBe("echo password:[redacted];sudo id");
  expect(JSON.parse(redactSecrets({ a: '{"token":"abc\\"def"}' }).a)).toEqual({ token: '[redacted]"def' });
  // JSON without a secret, and text that only looks like JSON, come back as they were.
  const plain = '{"cmd": "ls -l",  "yield_time_ms": 5000}';
  expect(redactSecrets({ arguments: plain }).arguments).toBe(plain);
  expect(redactSecrets({ arguments: "{not json: TOKEN=abc }" }).arguments).toBe("{not json: TOKEN=[redacted] }");
});

test("in plain text, \\\" is a literal character, as to the shell: what follows a secret's first word stays in view", () => {
  // bash runs `sudo id"` here: the summary must show it.
  expect(redactText('PASSWORD=\\"x sudo id\\"')).toBe('PASSWORD=[redacted] sudo id\\"');
  expect(redactText('run --password \\"x; sudo id; echo \\"')).toContain("; sudo id; echo");
  // An option's quoted value stops at an operator too.
  expect(redactText('psql --password "x; sudo id"')).toBe('psql --password [redacted]; sudo id"');
});

describe("redaction by value: credentials in URLs, options and webhook addresses", () => {
  const cases: Array<[name: string, input: string, secret: string, kept: string]> = [
    [
      "URL password",
      "connect failed: postgres://app:HunterTwo99@db.internal:5432/billing",
      "HunterTwo99",
      "postgres://app:[redacted]@db.internal:5432/billing",
    ],
    ["URL password in JSON", '{"dsn":"mysql://root:s3cr3t-Pw@127.0.0.1/app"}', "s3cr3t-Pw", "mysql://root:[redacted]@127.0.0.1/app"],
    [
      "Slack webhook",
      "POST https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX failed",
      "XXXXXXXXXXXXXXXXXXXXXXXX",
      "POST [redacted] failed",
    ],
    ["Discord webhook", "hook=https://discord.com/api/webhooks/123456789/abcDEF-token_value ok", "abcDEF-token_value", "ok"],
    ["--db-password X", "/usr/bin/app --db-password Tr0ub4dor --port 5432", "Tr0ub4dor", "--db-password [redacted] --port 5432"],
    ["--password=X", "backup --password=Tr0ub4dor&3 done", "Tr0ub4dor", "--password=[redacted]&3 done"],
    ["--api-key X at the start", "--api-key=live-123456789 --verbose", "live-123456789", "--api-key=[redacted] --verbose"],
    ["mysql -pX", "mysql -uroot -pHunterTwo99 -h db billing", "HunterTwo99", "mysql -uroot -p[redacted] -h db billing"],
    ["mysqldump -pX", "sh -c 'mysqldump -u app -pS3cret! app > /tmp/x'", "S3cret!", "-p[redacted] app > /tmp/x"],
    // The shell makes one word of quoted and bare parts: all of it is the password.
    ["mysql -p'X Y'", "mysql -u app -p'correct horse' billing", "horse", "mysql -u app -p[redacted] billing"],
    ['mysql -p"X Y"', 'mysql -p"battery staple" -e "select 1"', "staple", 'mysql -p[redacted] -e "select 1"'],
    ["mysql -pX'Y Z'W", "mysql -pab'cd ef'gh billing", "ef'gh", "mysql -p[redacted] billing"],
    ['mysql -p"X\\"Y Z"', 'mysql -p"ab\\"cd ef" billing', "ef", "mysql -p[redacted] billing"],
    ["mysql -pX\\ Y", "mysql -pab\\ cd billing", "cd", "mysql -p[redacted] billing"],
  ];
  for (const [name, input, secret, kept] of cases) {
    test(name, () => {
      const out = redactText(input);
      expect(out).not.toContain(secret);
      expect(out).toContain(kept);
    });
  }

  test("a quoted mysql password stops where the shell's command does, and stays valid JSON inside a tool call", () => {
    // Hidden up to what a second shell (ssh, sh -c) would start a command with: the rest stays.
    expect(redactText("mysql -p'x;sudo id'")).toBe("mysql -p[redacted];sudo id'");
    const quoted = (cmd: string) => JSON.parse(redactSecrets({ arguments: JSON.stringify({ cmd }) }).arguments as string).cmd;
    expect(quoted("mysql -p'correct horse' db")).toBe("mysql -p[redacted] db");
    expect(quoted('mysql -p"correct horse" db')).toBe("mysql -p[redacted] db");
    expect(quoted('mysql -p"ab\\"cd ef" db')).toBe("mysql -p[redacted] db");
  });

  test("a mysql password never hides a command: not one run inside its quotes, nor one on the next line", () => {
    const inJson = (cmd: string) => JSON.parse(redactSecrets({ arguments: JSON.stringify({ cmd }) }).arguments as string).cmd;
    const substitutions: Array<[cmd: string, run: string]> = [
      ['mysql -u app -p"$(rm -rf ~/backups)" billing', "rm -rf ~/backups"],
      ['mysql -u app -p"`chmod 4755 /bin/bash`" billing', "chmod 4755 /bin/bash"],
    ];
    for (const [cmd, run] of substitutions)
      expect({ plain: redactText(cmd).includes(run), json: inJson(cmd).includes(run) }).toEqual({ plain: true, json: true });
    // A quote the walk would misread (bash's $'…', an escaped quote, the closing quote of an SQL string)
    // never makes a quoted part of a substitution; another command's -p (in $(…), after a newline) is no password.
    const misread: Array<[cmd: string, run: string]> = [
      ["mysql -u app -p$'x\\'' $(rm -rf ~/backups) 'y' billing", "$(rm -rf ~/backups)"],
      ["mysql -u app -pX\\' $(rm -rf ~/backups) \\' billing", "$(rm -rf ~/backups)"],
      ["mysql -uroot -pHunterTwo99 -e 'SELECT total -p' $(cp -r ~/.ssh /tmp/x) '' billing", "$(cp -r ~/.ssh /tmp/x)"],
      ["mysql --help \\\\\nmkdir -p/etc/sudoers.d", "mkdir -p/etc/sudoers.d"],
      ["mysql -u $(install -m 4755 -p/bin/bash /tmp/sh; echo app) billing", "-p/bin/bash"],
      ["mysql -u app billing < <(mkdir -p/etc/sudoers.d)", "-p/etc/sudoers.d"],
    ];
    for (const [cmd, run] of misread)
      expect({ plain: redactText(cmd).includes(run), json: inJson(cmd).includes(run) }).toEqual({ plain: true, json: true });
    // In JSON text a newline is written \n: the next line is another command, whose -p is no password.
    for (const cmd of ["mysql --version\nmkdir -p/etc/sudoers.d", "mysql --version\r\ncp -p/root/.ssh/id_rsa /tmp"]) {
      expect(redactText(cmd)).toBe(cmd);
      expect(inJson(cmd)).toBe(cmd);
    }
  });

  test("every -p of a mysql command is hidden, on continued lines and with backslashes and quotes inside", () => {
    const inJson = (cmd: string) => JSON.parse(redactSecrets({ arguments: JSON.stringify({ cmd }) }).arguments as string).cmd;
    expect(redactText("mysql -pdecoy -pHunterTwo99 billing")).toBe("mysql -p[redacted] -p[redacted] billing");
    expect(redactText("mysql -h db \\\n  -u root \\\n  -pHunterTwo99 billing")).toBe(
      "mysql -h db \\\n  -u root \\\n  -p[redacted] billing",
    );
    for (const cmd of [
      "mysql -u app -p'back\\slash horse' billing",
      "mysql -u app -p'say\"cheese horse' billing",
      'mysql -u app -p"back\\\\slash horse" billing',
    ])
      expect({ plain: redactText(cmd), json: inJson(cmd) }).toEqual({
        plain: "mysql -u app -p[redacted] billing",
        json: "mysql -u app -p[redacted] billing",
      });
  });

  test("a mysql command is read as the shell reads it: quotes, a second shell, comments, here-documents", () => {
    const both = (cmd: string) => ({
      plain: redactText(cmd),
      json: JSON.parse(redactSecrets({ arguments: JSON.stringify({ cmd }) }).arguments as string).cmd,
    });
    const cases: Array<[cmd: string, redacted: string]> = [
      // Single quotes make `$` and `&` the password's: hidden up to what a second shell would run.
      ["mysql -uroot -p'P@ss$word1' db", "mysql -uroot -p[redacted] db"],
      ["mysql -uroot -p'Tr0ub4dor&3' db", "mysql -uroot -p[redacted]&3' db"],
      // A second shell (ssh, eval) reads escaped operators as its own: they and what follows stay.
      ["ssh db1 mysql -uroot -pHunter\\;rm\\ -rf\\ ~/backups", "ssh db1 mysql -uroot -p[redacted]\\;rm\\ -rf\\ ~/backups"],
      ["eval mysql -uroot -pX\\$\\(rm\\ -rf\\ ~/backups\\)", "eval mysql -uroot -p[redacted]\\$\\(rm\\ -rf\\ ~/backups\\)"],
      // A -p inside a quoted SQL string is no option, and the quote after it closes, not opens.
      [
        "mysql -uroot -e 'select 1 -p' --plugin-dir=/tmp/x --default-auth=evil '' billing",
        "mysql -uroot -e 'select 1 -p' --plugin-dir=/tmp/x --default-auth=evil '' billing",
      ],
      // A comment ends at its line, a backslash there too; the next line is another command.
      ["# log in with mysql \\\ncp -p/root/.ssh/id_rsa /tmp/x", "# log in with mysql \\\ncp -p/root/.ssh/id_rsa /tmp/x"],
      // A command held in quotes for another shell is read as one.
      ["sh -c 'mysqldump -u app -pS3cret! app > /tmp/x'", "sh -c 'mysqldump -u app -p[redacted] app > /tmp/x'"],
      ["ssh db1 \"mysql -uroot -p'correct horse' billing\"", 'ssh db1 "mysql -uroot -p[redacted] billing"'],
      // A here-document's lines are the client's input, not commands: the one after them is.
      [
        "mysql -uroot -pX <<'SQL'\nselect 'it''s';\nSQL\nmkdir -p/etc/x",
        "mysql -uroot -p[redacted] <<'SQL'\nselect 'it''s';\nSQL\nmkdir -p/etc/x",
      ],
      // …and one fed to a shell holds commands.
      ["ssh db <<'EOF'\nmysql -uroot -pHunterTwo99 -e 'select 1'\nEOF", "ssh db <<'EOF'\nmysql -uroot -p[redacted] -e 'select 1'\nEOF"],
      // Where ssh or eval read the words again, a blank or a quote in the password is where its hiding stops.
      [
        "ssh db mysql -uroot -p'Hunter2 -e \"system rm -rf ~/backups\"' billing",
        'ssh db mysql -uroot -p[redacted] -e "system rm -rf ~/backups"\' billing',
      ],
      [
        'ssh db mysql -uroot -p"Hunter2\'" -e "\'; rm -rf ~/backups; \'" billing',
        "ssh db mysql -uroot -p[redacted]'\" -e \"'; rm -rf ~/backups; '\" billing",
      ],
      // A client's name that is no command (an option's value, a data directory) makes no -p a password.
      ["docker run --name mysql -p0.0.0.0:3306:3306 -d mysql:8", "docker run --name mysql -p0.0.0.0:3306:3306 -d mysql:8"],
      ["find /var/lib/mysql -path '*/keep/*' -prune -o -type f -delete", "find /var/lib/mysql -path '*/keep/*' -prune -o -type f -delete"],
      [
        "sudo -u root /usr/bin/mysql -pX db && docker exec -it db mariadb-admin -pY status",
        "sudo -u root /usr/bin/mysql -p[redacted] db && docker exec -it db mariadb-admin -p[redacted] status",
      ],
      ["MYSQL_PWD=HunterTwo99 mysql -uroot billing", "MYSQL_PWD=[redacted] mysql -uroot billing"],
      // A second shell behind a wrapper, and double quotes read as the outer shell passes them on.
      [
        "sudo ssh db mysql -uroot -p'Hunter2 -e \"system rm -rf ~/backups\"' billing",
        'sudo ssh db mysql -uroot -p[redacted] -e "system rm -rf ~/backups"\' billing',
      ],
      [
        'bash -c "mysql -uroot -pHunter2\\\\\' -e \\"system rm -rf ~/backups\\" \\\\\'"',
        'bash -c "mysql -uroot -p[redacted]\\\\\' -e \\"system rm -rf ~/backups\\" \\\\\'"',
      ],
      // The shell's keywords and a wrapper's flags before the client.
      ["for db in a b; do mysqldump -uroot -pX $db > $db.sql; done", "for db in a b; do mysqldump -uroot -p[redacted] $db > $db.sql; done"],
      [
        "sudo -i mysql -uroot -pX billing && ssh db -t mysql -pY",
        "sudo -i mysql -uroot -p[redacted] billing && ssh db -t mysql -p[redacted]",
      ],
      // $'…' makes characters of its escapes (\x3b is `;`): hidden up to the first escape.
      [
        "ssh db mysql -uroot -p$'Hunter2\\x3brm\\x20-rf\\x20~/backups' billing",
        "ssh db mysql -uroot -p[redacted]\\x3brm\\x20-rf\\x20~/backups' billing",
      ],
      // Only the command a wrapper runs is a client: not another program's argument, not ssh's host.
      [
        "sudo find /srv -user mysql -path /srv/keep -prune -o -type f -delete",
        "sudo find /srv -user mysql -path /srv/keep -prune -o -type f -delete",
      ],
      ["sudo systemctl show mysql -pMainPID,ActiveState", "sudo systemctl show mysql -pMainPID,ActiveState"],
      ["ssh mysql -p2222", "ssh mysql -p2222"],
      // A substitution in double quotes is passed over: the quotes close, and the password after them is found.
      [
        'mysql -h "$(terraform output -raw db_host)" -uroot -pX billing',
        'mysql -h "$(terraform output -raw db_host)" -uroot -p[redacted] billing',
      ],
      [
        'docker exec -it "$(docker ps -qf name=db)" mysql -uroot -pX billing',
        'docker exec -it "$(docker ps -qf name=db)" mysql -uroot -p[redacted] billing',
      ],
      // Two shells read a quoted part again (ssh through a jump host): hiding stops at its blank.
      ["ssh jump ssh db \"mysql -uroot -p'Hunter2 -e system' billing\"", 'ssh jump ssh db "mysql -uroot -p[redacted] -e system\' billing"'],
    ];
    for (const [cmd, redacted] of cases) expect(both(cmd)).toEqual({ plain: redacted, json: redacted });
  });

  test("a secret-looking name as an array's last item takes nothing of the array", () => {
    const text = JSON.stringify({ argv: ["grep", "password:"], cwd: "/srv" });
    expect(JSON.parse(redactSecrets({ arguments: text }).arguments as string)).toEqual({ argv: ["grep", "password:"], cwd: "/srv" });
  });

  test("JSON text between blanks (a trailing newline, pretty printing) is read as JSON, and keeps its fields", () => {
    const text = `${JSON.stringify({ note: 'run `ls` " ', b: " mysql -p'x", c: "y'" }, null, 2)}\n`;
    expect(Object.keys(JSON.parse(redactSecrets({ arguments: text }).arguments as string))).toEqual(["note", "b", "c"]);
  });

  test("an empty secret value at the end of a string held in JSON takes nothing of the next string", () => {
    for (const cmd of ["MYSQL_PWD=", "mysql --password=", "export DB_PASSWORD="]) {
      const payload = JSON.stringify({ cmd, cwd: "/srv" });
      const out = JSON.parse(redactSecrets({ arguments: JSON.stringify({ payload }) }).arguments as string);
      expect(JSON.parse(out.payload)).toEqual({ cmd, cwd: "/srv" });
    }
  });

  test("JSON held in a tool call's string stays that JSON, with its fields", () => {
    const nested = (value: unknown) =>
      JSON.parse(
        JSON.parse(redactSecrets({ arguments: JSON.stringify({ tool: "remote_job", payload: JSON.stringify(value) }) }).arguments as string)
          .payload,
      );
    expect(nested({ cmd: "mysql -uroot -pHunterTwo99", host: "db1", timeout: "30" })).toEqual({
      cmd: "mysql -uroot -p[redacted]",
      host: "db1",
      timeout: "30",
    });
    // A bare -p (mysql asks for the password) at a string's end takes nothing of the next string.
    for (const value of [
      ["mysql -uroot -p", " --table"],
      { cmd: "mysql -uroot -p", " note": "asks" },
      ["mysql -h db -p", "(cleanup)"],
      ["mysql -p", "\nselect 1"],
    ])
      expect(nested(value)).toEqual(value);
  });

  test("in a tool call's JSON, mysql's password is found after a newline or tab and hidden with its quoted parts", () => {
    const inJson = (cmd: string) => JSON.parse(redactSecrets({ arguments: JSON.stringify({ cmd }) }).arguments as string).cmd;
    expect(inJson("cd /srv/app\nmysql -uroot -pHunterTwo99 billing")).toBe("cd /srv/app\nmysql -uroot -p[redacted] billing");
    expect(inJson("true &&\tmysql -uroot -pHunterTwo99 billing")).toBe("true &&\tmysql -uroot -p[redacted] billing");
    for (const cmd of [
      'mysql -p"Hunter"Two99 billing',
      'mysql -pab"c d"e billing',
      "mysql -p'a b'\"c d\" billing",
      "mysql -pcorrect\\ horse billing",
    ])
      expect(inJson(cmd)).toBe("mysql -p[redacted] billing");
  });

  test("what only looks like a secret option stays readable", () => {
    expect(redactText("mkdir -p /var/lib/app && ssh -p 2222 host")).toBe("mkdir -p /var/lib/app && ssh -p 2222 host");
    expect(redactText("curl --max-tokens 100 https://example.com/a:b@")).toBe("curl --max-tokens 100 https://example.com/a:b@");
    expect(redactText("https://user@example.com/path")).toBe("https://user@example.com/path");
    expect(redactText("login --password --stdin")).toBe("login --password --stdin");
  });

  test("every configured secret is hidden wherever it appears, also inside a URL", () => {
    const redactor = new Redactor(["plain-configured-secret"]);
    expect(redactor.redact("token plain-configured-secret and https://x/?k=plain-configured-secret")).toBe(
      "token [redacted] and https://x/?k=[redacted]",
    );
  });
});

describe("text a model writes cannot make redaction slow", () => {
  // Each shape made a pattern retry to the end of the text from every place it could start: at
  // 256 KiB these took from seconds to minutes each; now each takes milliseconds.
  const size = 256 * 1024;
  const shapes: Record<string, string> = {
    "a name without =": "PASSWORD".repeat(size / 8),
    "mysql words without -p": "mysql a ".repeat(size / 8),
    "a scheme that never reaches ://": "a.".repeat(size / 2),
    "sk- after sk-": "sk-".repeat(size / 3),
    "xoxb- after xoxb-": "xoxb-".repeat(size / 5),
    "JWT-like parts": "eyJaaaaaaaa.".repeat(size / 12),
    "eyJ after -": "-eyJ".repeat(size / 4),
    "a mysql command without -p": `mysql ${"mysql ".repeat(size / 6)}`,
    "backslashes after an option, in JSON": JSON.stringify({ c: ` --password=${"\\".repeat(size)}` }),
    "backslashes after a name, in JSON": JSON.stringify({ c: `TOKEN=${"\\".repeat(size)}x` }),
    "an option that never names a secret": ` --${"a-".repeat(size / 2)}`,
    "a mysql password's quote left open": `mysql -p"${"a'".repeat(size / 2)}`,
    "mysql passwords' quotes left open, in JSON": JSON.stringify({ c: `mysql -p"${"'a".repeat(size / 2)}` }),
    "open quotes, then escapes": `mysql -p'"${"\\😀".repeat(size / 3)}`,
    "a mysql password of backslashes, in JSON": JSON.stringify({ c: `mysql -p${"\\".repeat(size)}x` }),
    "${ refused as JSON held in the string, in JSON": JSON.stringify({ cmd: `mysql ${"${".repeat(size / 2)}",}` }),
  };
  for (const [name, text] of Object.entries(shapes))
    test(`${name}: redacted within the test's time`, () => {
      expect(redactSecrets({ text }).text.length).toBeGreaterThan(0);
    }, 5_000);

  test("names, schemes and keys of real sizes are still found", () => {
    const key = `sk-proj-${"A1b2".repeat(40)}`;
    expect(redactText(`export ${"X".repeat(60)}_DB_PASSWORD=hunter2 && run ${key}`)).toBe(
      `export ${"X".repeat(60)}_DB_PASSWORD=[redacted] && run [redacted]`,
    );
    expect(redactText("mysql -h db.internal -u app --port 3306 -pS3cret! -e 'select 1'")).toContain("-p[redacted]");
    expect(redactText("postgres+psycopg2://app:HunterTwo99@db/x")).toBe("postgres+psycopg2://app:[redacted]@db/x");
    // Long ones too: a token with many claims, a variable name of 100 characters, a dump of many tables.
    const jwt = `eyJhbGciOiJSUzI1NiJ9.eyJ${"Z3JvdXBz".repeat(1200)}.c2lnbmF0dXJlc2lnbmF0dXJl`;
    expect(redactText(`curl -d assertion=${jwt} x`)).toBe("curl -d assertion=[redacted] x");
    expect(redactText(`${"A".repeat(100)}_PASSWORD=hunter2 run`)).toBe(`${"A".repeat(100)}_PASSWORD=[redacted] run`);
    expect(redactText(`mysqldump -u b ${"--ignore-table=shop.audit_log ".repeat(25)}-pS3cretPass shop`)).toContain("-p[redacted] shop");
  });
});

test("a command's JSON stays the JSON it was, with the same fields, whatever the command (generated commands)", () => {
  const random = seededRandom(44);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const pieces = [
    "DB_PASSWORD=",
    "A_TOKEN=",
    "api_key: ",
    "token:",
    " --password ",
    "--api-key=",
    "mysql -u a -p",
    "sk-abcdefghijklmnop1234",
    '"',
    "'",
    "\\",
    '\\"',
    " ",
    ";",
    "|",
    "&&",
    "$(",
    ")",
    "`",
    "x",
    "two words",
    "é",
    "\n",
    "}",
    ",",
  ];
  for (let i = 0; i < 20_000; i++) {
    let cmd = "";
    const length = 1 + Math.floor(random() * 8);
    for (let j = 0; j < length; j++) cmd += pick(pieces);
    const text = JSON.stringify({ cmd, yield_time_ms: 5000 });
    const redacted = redactSecrets({ arguments: text }).arguments;
    let parsed: unknown;
    try {
      parsed = JSON.parse(redacted);
    } catch {
      parsed = undefined;
    }
    expect({ cmd, keys: parsed === undefined ? redacted : Object.keys(parsed as object) }).toEqual({ cmd, keys: ["cmd", "yield_time_ms"] });
  }
});
