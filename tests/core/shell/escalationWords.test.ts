import { describe, expect, test } from "bun:test";
import { namedUser, readEscalation, splitOption } from "../../../src/core/shell/escalationWords.ts";

describe("readEscalation: what agentd runs itself for an allowed bare escalation", () => {
  test("the words after the options, as root unless -u names another user", () => {
    expect(readEscalation(["sudo", "touch", "/root/x"])).toEqual({ user: "root", command: ["touch", "/root/x"] });
    expect(readEscalation(["sudo", "-n", "-u", "postgres", "psql", "-c", "select 1"])).toEqual({
      user: "postgres",
      command: ["psql", "-c", "select 1"],
    });
    expect(readEscalation(["/usr/bin/sudo", "--user=www-data", "--", "-weird-name"])).toEqual({
      user: "www-data",
      command: ["-weird-name"],
    });
    expect(readEscalation(["doas", "-uadmin", "id"])).toEqual({ user: "admin", command: ["id"] });
  });

  test("a shell, a login, the background or a group are refused with the reason; so is no command", () => {
    for (const argv of [
      ["sudo", "-i", "id"],
      ["sudo", "-s"],
      ["sudo", "-b", "sleep", "1"],
      ["sudo", "-g", "adm", "id"],
      ["sudo", "-n"],
    ]) {
      const reading = readEscalation(argv);
      expect("refused" in reading).toBe(true);
    }
    expect(readEscalation(["sudo", "-u"])).toEqual({ refused: "-u needs a value" });
    // The card would show a variable for kubectl; agentd would run a file the model wrote in the workdir.
    expect("refused" in readEscalation(["sudo", "KUBECONFIG=/etc/kubernetes/admin.conf", "kubectl", "get", "nodes"])).toBe(true);
    expect("refused" in readEscalation(["sudo", "bin/tool"])).toBe(true);
    expect(readEscalation(["sudo", "/usr/bin/id"])).toEqual({ user: "root", command: ["/usr/bin/id"] });
  });

  test("namedUser reads -u/--user and skips a -g value; splitOption splits attached values", () => {
    expect(namedUser(["sudo", "-g", "adm", "-u", "backup", "id"])).toBe("backup");
    expect(namedUser(["sudo", "id", "-u", "root"])).toBeNull();
    expect(splitOption("--user=x")).toEqual(["--user", "x"]);
    expect(splitOption("-ux")).toEqual(["-u", "x"]);
    expect(splitOption("-n")).toEqual(["-n", undefined]);
  });
});
